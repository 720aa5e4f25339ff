"""Metadata filters turned into LanceDB ``where`` clauses, safely.

User strings never reach a ``where`` clause unescaped: column names must come from an
allow-list, and every value becomes a SQL literal through :func:`sql_literal`, which
doubles single quotes and refuses NUL bytes and non-finite numbers.

A caller's filter is also bounded in size (:func:`check_filter_size`): LanceDB's SQL
parser (DataFusion) recurses once per ``AND`` and overflowed its stack, killing the
process with a segfault, on a filter of 40,000 keys (20,000 still parsed; measured with
``Pack.search(metadata=...)``, issue 23).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from packs.errors import InvalidFilter
from packs.validation import MAX_INT, MIN_INT, lone_surrogate, shown

# Columns of ``memories`` a caller may filter on directly.
MEMORY_FILTER_COLUMNS = frozenset(
    {"id", "kind", "source", "source_position", "title", "signal_polarity", "outcome"}
)

FilterValue = str | int | float | bool | None

# Far below the 20,000-40,000 ANDed terms that crashed the parser, and above any filter
# that can match: a row holds at most 64 metadata items (packs/validation.py) and 7
# filterable columns (hand-set).
MAX_FILTER_TERMS = 128
# Values of one "any of" list: 100,000 ids parsed fine; 10,000 is a generous page.
MAX_FILTER_VALUES = 10_000
# The whole clause, in characters: 10,000 values of ~100 characters.
MAX_FILTER_CHARS = 1 << 20


def check_filter_size(terms: int, values: int = 0, chars: int = 0) -> None:
    """Refuse a filter of more than :data:`MAX_FILTER_TERMS` terms, a list of more than
    :data:`MAX_FILTER_VALUES` values, or a clause of more than :data:`MAX_FILTER_CHARS`."""
    if terms > MAX_FILTER_TERMS:
        raise InvalidFilter(
            f"The filter has {terms:,} terms, above the bound of {MAX_FILTER_TERMS}; a row "
            "holds at most 64 metadata items, so filter on the few keys that matter."
        )
    if values > MAX_FILTER_VALUES:
        raise InvalidFilter(
            f"A filter list has {values:,} values, above the bound of {MAX_FILTER_VALUES:,}; "
            "split the query."
        )
    if chars > MAX_FILTER_CHARS:
        raise InvalidFilter(
            f"The filter is {chars:,} characters long, above the bound of "
            f"{MAX_FILTER_CHARS:,}; filter on fewer or shorter values."
        )


def sql_literal(value: object) -> str:
    """One value as a SQL literal that can't end the string it sits in."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        if not MIN_INT <= value <= MAX_INT:
            raise InvalidFilter(
                f"Filter value of {value.bit_length()} bits is beyond the 64-bit integers a "
                "Pack stores."
            )
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFilter(f"Filter value {value!r} is not a finite number.")
        return repr(value)
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidFilter("Filter value contains a NUL byte.")
        at = lone_surrogate(value)
        if at is not None:
            raise InvalidFilter(
                f"Filter value {value[:40]!r} is not valid Unicode (a lone surrogate at "
                f"character {at}, from invalid UTF-8); pass UTF-8 text."
            )
        return "'" + value.replace("'", "''") + "'"
    raise InvalidFilter(f"Unsupported filter value type {type(value).__name__}.")


def _values(value: object, name: object) -> list[object]:
    """A filter's value as its list of scalar values ("any of" for a list), each one a
    str, number, bool or None: a nested list or object is refused before anything walks
    it (a 50,000-deep list used to end in RecursionError)."""
    values = list(value) if isinstance(value, list | tuple | set | frozenset) else [value]
    check_filter_size(1, len(values))
    for item in values:
        if item is not None and not isinstance(item, str | int | float | bool):
            raise InvalidFilter(
                f"Filter {shown(name)} takes a value or a list of values (str, number, bool "
                f"or None), not {shown(item)}."
            )
        sql_literal(item)  # every value a literal the clause can hold
    return values


def tag(key: str, value: object) -> str:
    """The tag under which a metadata item is indexed for filtering.

    ``key=value`` with ``\\`` and ``=`` escaped in the key (so the first bare ``=``
    ends it: ``{"a": "b=c"}`` and ``{"a=b": "c"}`` differ), the value as text (so ``1``
    and ``"1"`` are equal), and ``=key`` for a None value (so ``""`` and None differ). A
    key without ``=`` or ``\\`` gives the same tag as before the escaping, so older
    Packs still match, except their None values, tagged ``key=`` then (the tag of ``""``
    now; see ``docs/settings.md``). Every tag holds a ``=``: ``packs/store/scopes.py``'s
    marker tag has none.
    """
    escaped = key.replace("\\", "\\\\").replace("=", "\\=")
    if value is None:
        return f"={escaped}"
    return f"{escaped}={value}"


def in_clause(column: str, values: Iterable[object]) -> str:
    """``column IN (...)`` with every value escaped. ``column`` must be trusted."""
    items = [sql_literal(v) for v in values]
    if not items:
        return "FALSE"
    return f"{column} IN ({', '.join(items)})"


def where_clause(
    where: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    allowed: frozenset[str] = MEMORY_FILTER_COLUMNS,
) -> str | None:
    """AND of equality tests: ``where`` on allowed columns, ``metadata`` on tags.

    A list or tuple value means "any of these". ``None`` means "is null". The size is
    bounded (:func:`check_filter_size`).
    """
    check_filter_size(len(where or {}) + len(metadata or {}))
    parts: list[str] = []
    for column, value in (where or {}).items():
        if column not in allowed:
            raise InvalidFilter(
                f"Cannot filter on {shown(column)}; filterable columns are {sorted(allowed)}. "
                "Put other keys in metadata= instead."
            )
        if isinstance(value, list | tuple | set | frozenset):
            parts.append(in_clause(column, sorted(_values(value, column), key=repr)))
        elif value is None:
            parts.append(f"{column} IS NULL")
        else:
            parts.append(f"{column} = {sql_literal(_values(value, column)[0])}")
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not key:
            raise InvalidFilter(f"Metadata filter key {shown(key)} must be a non-empty str.")
        values = _values(value if isinstance(value, list | tuple) else [value], key)
        tags = ", ".join(sql_literal(tag(key, v)) for v in values)
        parts.append(f"array_has_any(tags, make_array({tags}))")
    clause = " AND ".join(f"({p})" for p in parts)
    check_filter_size(len(parts), chars=len(clause))
    return clause or None
