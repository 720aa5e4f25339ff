"""Metadata filters turned into LanceDB ``where`` clauses, safely.

User strings never reach a ``where`` clause unescaped: column names must come from an
allow-list, and every value becomes a SQL literal through :func:`sql_literal`, which
doubles single quotes and refuses NUL bytes and non-finite numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from packs.errors import InvalidFilter
from packs.validation import lone_surrogate

# Columns of ``memories`` a caller may filter on directly.
MEMORY_FILTER_COLUMNS = frozenset(
    {"id", "kind", "source", "source_position", "title", "signal_polarity", "outcome"}
)

FilterValue = str | int | float | bool | None


def sql_literal(value: object) -> str:
    """One value as a SQL literal that can't end the string it sits in."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
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

    A list or tuple value means "any of these". ``None`` means "is null".
    """
    parts: list[str] = []
    for column, value in (where or {}).items():
        if column not in allowed:
            raise InvalidFilter(
                f"Cannot filter on {column!r}; filterable columns are {sorted(allowed)}. "
                "Put other keys in metadata= instead."
            )
        if isinstance(value, list | tuple | set | frozenset):
            parts.append(in_clause(column, sorted(value, key=repr)))
        elif value is None:
            parts.append(f"{column} IS NULL")
        else:
            parts.append(f"{column} = {sql_literal(value)}")
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not key:
            raise InvalidFilter(f"Metadata filter key {key!r} must be a non-empty str.")
        values = value if isinstance(value, list | tuple) else [value]
        tags = ", ".join(sql_literal(tag(key, v)) for v in values)
        parts.append(f"array_has_any(tags, make_array({tags}))")
    return " AND ".join(f"({p})" for p in parts) or None
