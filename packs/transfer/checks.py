"""What an import checks in every row of an export before a byte is written (issue 31).

The file is data from outside: it never chooses code, tables, scopes or deletions. Each
batch (:class:`~packs.transfer.formats.Rows`) is held to what ``remember`` and the log
writers hold a caller to, and an error names the file and its line (or Parquet row):

- **Tables**: only the tables Wolfie writes; ``forgotten`` (tombstones) is never taken
  from a file, since a forged one would erase another user at the next purge.
- **Rows**: the target table's columns and types; keys present and each once in the
  file; text within the Pack's ``max_text_chars`` (JSON columns within 1 MiB) without
  NUL bytes; every float finite; vectors of the Pack's dimension, finite; utilities,
  confidences, rewards and weights in range; ``kind`` and ``signal_polarity`` from their
  vocabularies.
- **Scopes**: a row's scope is its ``metadata`` (``tags`` are recomputed from it, never
  read). Without a ``scope`` (:class:`ImportRules`) a scoped row is refused unless the
  operator keeps the file's scopes (``keep_scopes``: a whole Pack restored); with one,
  every memory and episode becomes that scope's.
- **References**: reward events, retrieval logs, merges, history, lessons and validations
  name memories and episodes of the file itself (:class:`References`), so a file can't
  reach another user's rows by id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from packs.errors import InvalidInput
from packs.eval_sets import EVAL_SETS, MAX_EVAL_SET_BYTES
from packs.learning.ema import REVISION_SOURCE
from packs.store import schemas
from packs.store.rows import tags_of
from packs.store.scopes import (
    SCOPE_KEY,
    SCOPED_TAG,
    episode_scope,
    scoped_metadata,
    visible_clause,
)
from packs.transfer.formats import Rows
from packs.validation import check_metadata, parse_json, shown

# Each table's key (an import inserts the rows whose key is new), and the tables an
# import takes: a table of no key here (a later Wolfie's, a forged one) is refused.
KEYS: dict[str, tuple[str, ...]] = {
    schemas.MEMORIES: ("id",),
    schemas.EPISODES: ("id",),
    schemas.RETRIEVAL_LOG: ("episode_id", "item_id"),
    schemas.REWARD_EVENTS: ("event_id",),
    schemas.MERGES: ("merge_id",),
    schemas.MEMORY_HISTORY: ("version_id",),
    schemas.LESSON_LOG: ("memory_id", "at", "writer"),
    schemas.VALIDATIONS: ("episode_id", "hook", "at"),
    schemas.STATE_TRACES: ("at",),
    schemas.EVAL_RUNS: ("run_id", "metric", "at"),
    EVAL_SETS: ("name",),
    schemas.TUNING: ("id",),  # the adoption log: numbers and settings, never user text
    schemas.PACK_META: ("key",),
}
NEVER_IMPORTED = (schemas.FORGOTTEN,)  # tombstones: never trusted from a file
MAX_JSON_CHARS = 1 << 20  # a JSON column (metadata, changes, a stored filter): 1 MiB
LIMITS = {(EVAL_SETS, "jsonl"): MAX_EVAL_SET_BYTES}  # characters; text: max_text_chars
# (table, column) -> the file's table whose ids it must name.
REFERENCES = {
    (schemas.REWARD_EVENTS, "memory_id"): schemas.MEMORIES,
    (schemas.REWARD_EVENTS, "episode_id"): schemas.EPISODES,
    (schemas.RETRIEVAL_LOG, "item_id"): schemas.MEMORIES,
    (schemas.RETRIEVAL_LOG, "episode_id"): schemas.EPISODES,
    (schemas.MERGES, "memory_id"): schemas.MEMORIES,
    (schemas.MEMORY_HISTORY, "memory_id"): schemas.MEMORIES,
    (schemas.LESSON_LOG, "memory_id"): schemas.MEMORIES,
    (schemas.VALIDATIONS, "episode_id"): schemas.EPISODES,
    (schemas.REWARD_EVENTS, "version_id"): schemas.MEMORY_HISTORY,  # a revision's event
}
# column -> (low, high) for the numbers a Pack keeps in range
RANGES = {
    (schemas.MEMORIES, "utility"): (-1.0, 1.0),
    (schemas.MEMORIES, "confidence"): (0.0, 1.0),
    (schemas.MEMORIES, "usage_count"): (0, None),
    (schemas.MEMORIES, "reward_count"): (0, None),
    (schemas.MEMORIES, "merge_count"): (0, None),
    (schemas.REWARD_EVENTS, "value"): (-1.0, 1.0),
    (schemas.REWARD_EVENTS, "weight"): (0.0, 1.0),
    (schemas.REWARD_EVENTS, "alpha"): (0.0, 1.0),
    (schemas.REWARD_EVENTS, "confidence_rate"): (0.0, 1.0),
}
VOCABULARY = {
    (schemas.MEMORIES, "kind"): {schemas.KIND_MEMORY, schemas.KIND_KNOWLEDGE},
    (schemas.MEMORIES, "signal_polarity"): {"success", "failure"},
}


@dataclass(frozen=True)
class ImportRules:
    """What the rows are held to: the target's tables (name -> schema) and the
    operator's scope choice."""

    tables: dict[str, pa.Schema]
    scope: str | None = None
    keep_scopes: bool = False


@dataclass
class FileFacts:
    """What the whole file must satisfy, gathered batch by batch and checked once it is
    read (:meth:`check`): ids each table holds and where each is named from another
    table; the longest text of each column (the limit is the settings in force after the
    import, which the file may carry last); each memory's and episode's scope."""

    held: dict[str, set[str]] = field(default_factory=dict)
    named: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    longest: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    scopes: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def check(self, max_text_chars: int) -> None:
        for (table, column), (length, where) in self.longest.items():
            limit = LIMITS.get((table, column), MAX_JSON_CHARS if column.endswith("_json") else 0)
            if length > (limit or max_text_chars):
                raise InvalidInput(
                    f"{where}: {table}.{column} has {length:,} characters, above the limit of "
                    f"{limit or max_text_chars:,} (the Pack's max_text_chars for text)."
                )
        for (table, column), names in self.named.items():
            target = REFERENCES[(table, column)]
            held = self.held.get(target, set())
            for value, where in names.items():
                if value not in held:
                    raise InvalidInput(
                        f"{where}: {table}.{column} names {shown(value)}, which is not in the "
                        f"file's {target}; an import reaches only the rows it brings."
                    )


def checked(
    rows: Rows, rules: ImportRules, keys: dict[str, set[Any]], facts: FileFacts
) -> pa.Table:
    """``rows`` in the target table's schema, held to every rule (the module docstring),
    with scopes applied and tags recomputed; :class:`InvalidInput` names the row."""
    name = rows.table
    if name not in rules.tables or name not in KEYS:
        raise InvalidInput(
            f"{rows.file} holds table {name!r}, which Wolfie does not import; export the "
            "Pack again with this Wolfie."
        )
    data = _conformed(rows, rules.tables[name])
    _unique(rows, data, KEYS[name], keys.setdefault(name, set()))
    _values(rows, data, facts)
    if name == schemas.MEMORIES:
        data = _scoped_memories(rows, data, rules)
    elif name == schemas.EPISODES:
        data = _scoped_episodes(rows, data, rules)
    elif name == schemas.LESSON_LOG and "scope" in data.column_names:
        data = _scoped_lessons(rows, data, rules)
    revisions = _revision_events(name, data)
    for table, column in REFERENCES:
        if table != name or column not in data.column_names:
            continue
        for index, value in enumerate(data.column(column).to_pylist()):
            # a revision's event names its memory_history version, not an episode
            revision = revisions[index] and column == "episode_id"
            ref = (table, "version_id") if revision else (table, column)
            facts.named.setdefault(ref, {}).setdefault(value, rows.where(index))
    if name == schemas.MEMORY_HISTORY:
        facts.held.setdefault(name, set()).update(data.column("version_id").to_pylist())
    if name in (schemas.MEMORIES, schemas.EPISODES):
        ids = data.column("id").to_pylist()
        facts.held.setdefault(name, set()).update(ids)
        scopes = _scopes(name, data)
        facts.scopes.update(((name, i), s) for i, s in zip(ids, scopes, strict=True))
    return data


def _revision_events(name: str, data: pa.Table) -> list[bool]:
    """Which rows are a revision's reward events (their episode is a history version)."""
    if name != schemas.REWARD_EVENTS:
        return [False] * data.num_rows
    return [source == REVISION_SOURCE for source in data.column("source").to_pylist()]


def _scopes(name: str, data: pa.Table) -> list[str | None]:
    if name == schemas.EPISODES:
        return [episode_scope(text) for text in data.column("filter_json").to_pylist()]
    texts = data.column("metadata_json").to_pylist()
    return [json.loads(text).get(SCOPE_KEY) if text else None for text in texts]


def _conformed(rows: Rows, schema: pa.Schema) -> pa.Table:
    """The batch in the target schema: columns by name, a missing nullable one as nulls;
    a column the table lacks, a missing required one or a value of another type is
    refused."""
    batch = rows.data
    extra = sorted(set(batch.column_names) - set(schema.names))
    if extra:
        raise InvalidInput(f"{rows.file}: table {rows.table!r} has columns Wolfie lacks: {extra}.")
    columns = []
    for target in schema:
        if target.name in batch.column_names:
            column = batch.column(target.name)
            try:
                columns.append(column.cast(target.type))
            except (pa.ArrowException, ValueError) as exc:
                raise InvalidInput(
                    f"{rows.file}: {rows.table}.{target.name} is not {target.type} "
                    f"({shown(exc)}); a vector must have the Pack's dimension."
                ) from None
            if not target.nullable and column.null_count:
                at = pc.index(pc.is_null(column), True).as_py()
                raise InvalidInput(f"{rows.where(at)}: {rows.table}.{target.name} is missing.")
        elif target.nullable:
            columns.append(pa.nulls(batch.num_rows, target.type))
        else:
            raise InvalidInput(f"{rows.file}: table {rows.table!r} lacks column {target.name!r}.")
    return pa.Table.from_arrays(columns, schema=schema)


def _unique(rows: Rows, data: pa.Table, key: tuple[str, ...], seen: set[Any]) -> None:
    values = zip(*(data.column(c).to_pylist() for c in key), strict=True)
    for index, value in enumerate(values):
        if value in seen:
            raise InvalidInput(
                f"{rows.where(index)}: {rows.table} {dict(zip(key, value, strict=True))} is "
                "in the file twice; each row must be once."
            )
        seen.add(value)


def _values(rows: Rows, data: pa.Table, facts: FileFacts) -> None:
    for column in data.schema:
        values = data.column(column.name)
        kind = column.type
        key = (rows.table, column.name)
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            lengths = pc.fill_null(pc.utf8_length(values), 0)
            if len(lengths):
                at = pc.index(lengths, pc.max(lengths)).as_py()
                longest = lengths[at].as_py()
                if longest > facts.longest.get(key, (-1, ""))[0]:
                    facts.longest[key] = (longest, rows.where(at))
            _first(rows, column.name, pc.match_substring(values, "\x00"), "holds a NUL byte")
            if key in VOCABULARY:
                allowed = pa.array(sorted(VOCABULARY[key]))
                bad = pc.and_(pc.is_valid(values), pc.invert(pc.is_in(values, allowed)))
                _first(rows, column.name, bad, f"is not one of {sorted(VOCABULARY[key])}")
        elif pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind):
            if pa.types.is_floating(kind.value_type):
                flat = pc.list_flatten(values)
                if len(flat) and not pc.all(pc.is_finite(flat)).as_py():
                    _first(rows, column.name, _rows_not_finite(values), "holds NaN or infinity")
        elif pa.types.is_floating(kind) or pa.types.is_integer(kind):
            if pa.types.is_floating(kind):
                _first(rows, column.name, pc.invert(pc.is_finite(values)), "is NaN or infinite")
            low, high = RANGES.get(key, (None, None))
            if low is not None:
                _first(rows, column.name, pc.less(values, low), f"is below {low}")
            if high is not None:
                _first(rows, column.name, pc.greater(values, high), f"is above {high}")


def _rows_not_finite(values: pa.ChunkedArray) -> pa.Array:
    flags = [
        row is not None
        and not all(v is not None and v == v and abs(v) != float("inf") for v in row)
        for row in values.to_pylist()
    ]
    return pa.array(flags)


def _first(rows: Rows, column: str, flags: Any, says: str) -> None:
    """Refuse the first row where ``flags`` is true (nulls count as false)."""
    flags = pc.fill_null(flags, False)
    if pc.any(flags).as_py():
        at = pc.index(flags, True).as_py()
        raise InvalidInput(f"{rows.where(at)}: {rows.table}.{column} {says}.")


def _scoped_memories(rows: Rows, data: pa.Table, rules: ImportRules) -> pa.Table:
    """Each row's metadata checked as ``remember`` checks it, its scope the operator's
    (or refused, or kept: :class:`ImportRules`), and its tags recomputed from it."""
    metas, tags = [], []
    given = data.column("tags").to_pylist()
    for index, text in enumerate(data.column("metadata_json").to_pylist()):
        where = rows.where(index)
        meta = _metadata(text, where)
        if _scope_tags(given[index] or []) != _scope_tags(tags_of(meta)):
            raise InvalidInput(
                f"{where}: the memory's tags name a scope its metadata does not (a file "
                "Wolfie did not write); tags are never taken from a file."
            )
        meta = _scope_of(meta, rules, where, "memory")
        metas.append(json.dumps(meta, sort_keys=True, ensure_ascii=False) if meta else None)
        tags.append(tags_of(meta))
    data = data.set_column(
        data.schema.get_field_index("metadata_json"), "metadata_json", pa.array(metas, pa.string())
    )
    field_ = data.schema.field("tags")
    return data.set_column(data.schema.get_field_index("tags"), field_, pa.array(tags, field_.type))


def _scope_tags(tags: list[str]) -> set[str]:
    return {t for t in tags if t == SCOPED_TAG or t.startswith(f"{SCOPE_KEY}=")}


def _metadata(text: str | None, where: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = parse_json(text, "metadata_json")
        return check_metadata(value)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None


def _scope_of(meta: dict[str, Any], rules: ImportRules, where: str, what: str) -> dict[str, Any]:
    given = meta.get(SCOPE_KEY)
    if rules.scope is not None:
        return scoped_metadata({k: v for k, v in meta.items() if k != SCOPE_KEY}, rules.scope)
    if given is not None and not rules.keep_scopes:
        raise InvalidInput(
            f"{where}: this {what} belongs to scope {shown(given)}. An import takes no scope from "
            "a file unless told: pass a scope (--scope NAME) to make every row that "
            "scope's, or keep the file's scopes (--keep-scopes) to restore a whole Pack."
        )
    return meta


def _scoped_episodes(rows: Rows, data: pa.Table, rules: ImportRules) -> pa.Table:
    """Each episode's stored filter: refused when it names a scope the operator did not
    allow, rewritten to the operator's scope when one is given."""
    filters = []
    for index, text in enumerate(data.column("filter_json").to_pylist()):
        scope = episode_scope(text)
        if scope is not None:
            _scope_of({SCOPE_KEY: scope}, rules, rows.where(index), "episode")
        if rules.scope is not None:
            text = _refiltered(text, rules.scope)
        filters.append(text)
    return data.set_column(
        data.schema.get_field_index("filter_json"), "filter_json", pa.array(filters, pa.string())
    )


def _scoped_lessons(rows: Rows, data: pa.Table, rules: ImportRules) -> pa.Table:
    """A scope's lesson of a shared memory (packs/store/lesson_scopes.py) is refused as
    a scoped row is; with the operator's scope every memory is that scope's, so each
    lesson is its memory's own (no scope)."""
    scopes = data.column("scope").to_pylist()
    for index, scope in enumerate(scopes):
        if scope is not None:
            _scope_of({SCOPE_KEY: scope}, rules, rows.where(index), "lesson")
    if rules.scope is None:
        return data
    field_ = data.schema.field("scope")
    return data.set_column(
        data.schema.get_field_index("scope"), field_, pa.nulls(len(scopes), field_.type)
    )


def _refiltered(text: str | None, scope: str) -> str:
    """A stored filter with its visibility test replaced by ``scope``'s."""
    visible = visible_clause(scope)
    for old in (visible_clause(episode_scope(text)), visible_clause(None)):
        if text and text.startswith(old):
            return visible + text[len(old) :]
    return visible if not text else f"{visible} AND ({text})"
