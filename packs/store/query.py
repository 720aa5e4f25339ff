"""Read-only queries over a Pack's tables, as polars DataFrames.

Filters are structured, never SQL text: a column must exist in the table's schema, the
operator comes from an allow-list, and every value becomes a literal through
:func:`packs.store.filters.sql_literal`. A query may read a past version of a table (time
travel). Vector columns are left out unless asked for by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from packs.errors import InvalidFilter, InvalidInput, PackNotFound
from packs.lazy import lazy_module
from packs.store import schemas
from packs.store.filters import check_filter_size, in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.validation import shown

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

# Query names -> (table, fixed condition). "knowledge" and "memories" split one table.
QUERYABLE: dict[str, tuple[str, str | None]] = {
    "memories": (schemas.MEMORIES, f"kind = {sql_literal(schemas.KIND_MEMORY)}"),
    "knowledge": (schemas.MEMORIES, f"kind = {sql_literal(schemas.KIND_KNOWLEDGE)}"),
    "items": (schemas.MEMORIES, None),
    "episodes": (schemas.EPISODES, None),
    "retrievals": (schemas.RETRIEVAL_LOG, None),
    "rewards": (schemas.REWARD_EVENTS, None),
    "traces": (schemas.STATE_TRACES, None),
    "validations": (schemas.VALIDATIONS, None),
    "lessons": (schemas.LESSON_LOG, None),
    "evals": (schemas.EVAL_RUNS, None),
    "forgotten": (schemas.FORGOTTEN, None),  # one tombstone per forget (ids, never text)
}
OPERATORS = frozenset({"=", "!=", "<", "<=", ">", ">=", "in"})
AGGREGATIONS = frozenset({"count", "mean", "sum", "min", "max", "n_unique"})


@dataclass(frozen=True)
class Condition:
    column: str
    op: str
    value: object


@dataclass(frozen=True)
class AllOf:
    """Several ``(op, value)`` conditions on one column, ANDed:
    ``{"utility": AllOf(((">", 0), ("<", 0.5)))}`` (a mapping holds one value per column)."""

    conditions: tuple[tuple[str, object], ...]


def parse_conditions(where: Mapping[str, object] | Sequence[Condition] | None) -> list[Condition]:
    """``{"kind": "memory", "utility": (">=", 0.5), "id": ["a", "b"]}`` -> conditions."""
    if where is None:
        return []
    if not isinstance(where, Mapping):
        return list(where)
    out = []
    for column, value in where.items():
        if isinstance(value, AllOf):
            for part in value.conditions:
                if not (isinstance(part, tuple) and len(part) == 2):
                    raise InvalidFilter(
                        f"AllOf for {column!r} takes (op, value) pairs, not {shown(part)}."
                    )
                out.append(Condition(column, part[0], part[1]))
        elif isinstance(value, tuple) and len(value) == 2 and value[0] in OPERATORS:
            out.append(Condition(column, value[0], value[1]))
        elif isinstance(value, list | set | frozenset):
            out.append(Condition(column, "in", list(value)))
        else:
            out.append(Condition(column, "=", value))
    return out


def clause_for(conditions: Sequence[Condition], schema: pa.Schema) -> str | None:
    """SQL for ``conditions`` on ``schema``'s columns only, every value a literal, of a
    bounded size (:func:`packs.store.filters.check_filter_size`)."""
    check_filter_size(len(conditions))
    names = set(schema.names)
    parts = []
    for cond in conditions:
        if not isinstance(cond.column, str) or cond.column not in names:
            raise InvalidFilter(
                f"Unknown column {shown(cond.column)}; this table has {sorted(names)}."
            )
        if cond.op not in OPERATORS:
            raise InvalidFilter(f"Operator {shown(cond.op)} is not one of {sorted(OPERATORS)}.")
        if _is_vector(schema.field(cond.column).type):
            raise InvalidFilter(f"Column {cond.column!r} is a vector; it can't be filtered.")
        kind = schema.field(cond.column).type
        if cond.op == "in":
            values = cond.value if isinstance(cond.value, list | tuple) else [cond.value]
            check_filter_size(1, len(values))
            parts.append(in_clause(cond.column, [_coerce(v, kind, cond.column) for v in values]))
        elif cond.value is None and cond.op in ("=", "!="):
            parts.append(f"{cond.column} IS {'NOT ' if cond.op == '!=' else ''}NULL")
        else:
            value = _coerce(cond.value, kind, cond.column)
            parts.append(f"{cond.column} {cond.op} {sql_literal(value)}")
    clause = " AND ".join(f"({p})" for p in parts)
    check_filter_size(len(parts), chars=len(clause))
    return clause or None


def _coerce(value: object, kind: pa.DataType, column: str) -> object:
    """The value in the column's own type: text columns compare with text, numeric
    columns with finite numbers, booleans with booleans."""
    if value is None:
        return None
    if not isinstance(value, str | int | float | bool):
        raise InvalidFilter(f"{shown(value)} is not a value {column!r} can be compared with.")
    if isinstance(value, int) and not isinstance(value, bool):
        sql_literal(value)  # an integer beyond int64 is refused before any conversion
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return value if isinstance(value, str) else str(value)
    if pa.types.is_boolean(kind):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
        try:
            number = float(value) if isinstance(value, str) else value
        except ValueError:
            number = None
        if isinstance(number, int | float) and not isinstance(number, bool):
            if pa.types.is_integer(kind) and float(number).is_integer():
                return int(number)
            return number  # sql_literal refuses NaN and inf
    elif pa.types.is_timestamp(kind) and isinstance(value, str):
        raise InvalidFilter(f"Filtering {column!r} by time is not supported; filter in polars.")
    else:
        return value
    raise InvalidFilter(f"{shown(value)} is not a valid value for {column!r} ({kind}).")


def _is_vector(kind: pa.DataType) -> bool:
    return pa.types.is_fixed_size_list(kind)


def query_table(
    store: PackStore,
    name: str,
    where: Mapping[str, object] | Sequence[Condition] | None = None,
    columns: Sequence[str] | None = None,
    limit: int | None = None,
    version: int | None = None,
) -> pl.DataFrame:
    """Rows of the query ``name`` (see QUERYABLE) as a polars DataFrame."""
    if name not in QUERYABLE:
        raise InvalidInput(f"Unknown table {name!r}; choose from {sorted(QUERYABLE)}.")
    table_name, fixed = QUERYABLE[name]
    if table_name not in store.table_names():
        raise PackNotFound(
            f"Pack {store.location.name!r} has no {table_name!r} table yet "
            "(eval_runs appears after the first eval run)."
        )
    if version is None:
        store.latest_version(table_name)  # see other handles' commits
    schema = store.schema(table_name, version)
    clause = clause_for(parse_conditions(where), schema)
    wanted = list(columns) if columns else [f.name for f in schema if not _is_vector(f.type)]
    unknown = sorted(set(wanted) - set(schema.names))
    if unknown:
        raise InvalidFilter(f"Unknown column(s) {unknown}; this table has {schema.names}.")
    condition = " AND ".join(f"({c})" for c in (fixed, clause) if c) or None
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInput(f"limit must be a positive int, got {limit!r}.")
    rows = store.scan(table_name, wanted, condition, limit=limit, version=version)
    frame = pl.from_arrow(rows if rows.num_rows else schema.empty_table().select(wanted))
    assert isinstance(frame, pl.DataFrame)
    return frame


def aggregate(
    frame: pl.DataFrame, group_by: Sequence[str], aggregations: Sequence[str]
) -> pl.DataFrame:
    """``group_by`` columns with ``count`` or ``fn:column`` aggregations (allow-listed)."""
    exprs = []
    for spec in aggregations or ["count"]:
        fn, _, column = spec.partition(":")
        if fn not in AGGREGATIONS:
            raise InvalidInput(f"Aggregation {fn!r} is not one of {sorted(AGGREGATIONS)}.")
        if fn == "count":
            exprs.append(pl.len().alias("count"))
            continue
        if column not in frame.columns:
            raise InvalidFilter(f"Unknown column {column!r} to aggregate.")
        exprs.append(getattr(pl.col(column), fn)().alias(f"{fn}_{column}"))
    unknown = sorted(set(group_by) - set(frame.columns))
    if unknown:
        raise InvalidFilter(f"Unknown group-by column(s) {unknown}.")
    if not group_by:
        return frame.select(exprs)
    return frame.group_by(list(group_by), maintain_order=True).agg(exprs).sort(list(group_by))


def versions(store: PackStore, name: str) -> list[dict[str, Any]]:
    """The versions of a query's table (for time travel)."""
    if name not in QUERYABLE:
        raise InvalidInput(f"Unknown table {name!r}; choose from {sorted(QUERYABLE)}.")
    return store.versions(QUERYABLE[name][0])
