"""A merge never reaches a row it did not create (issue 42).

A memory's id is a hash of its text, so anyone can compute the id of a shared memory
and write a file whose reward events, history, lessons or merges name it. An import
into a Pack that already holds rows therefore never lets the file's rows name the
Pack's:

- a file from outside (no ``--keep-scopes``): each memory or episode of the file whose id
  the Pack already holds lands as a new row, under a fresh id, and every row of the file
  that names it names the new id (:func:`fresh_ids`, :func:`rebound`): its rewards,
  history and lessons are its own;
- a whole Pack restored (``--keep-scopes``): the file's copy of a memory or episode the
  Pack holds is that row (a re-import adds nothing), so the file's rows that name it are
  dropped: the Pack's row keeps the rewards, history and lessons the engine wrote.

Either way an existing memory's ``memory_history`` and ``lesson_log`` are written by the
engine alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from packs.store import schemas
from packs.store.filters import in_clause
from packs.store.gateway import PackStore
from packs.store.rows import stable_hash

_ID_CHUNK = 1_000
# (table, column) -> which ids it holds: "memory" or "episode"; list columns included.
ID_COLUMNS: dict[tuple[str, str], str] = {
    (schemas.MEMORIES, "id"): "memory",
    (schemas.MEMORIES, "superseded_by"): "memory",
    (schemas.EPISODES, "id"): "episode",
    (schemas.EPISODES, "candidate_ids"): "memory",
    (schemas.EPISODES, "injected_ids"): "memory",
    (schemas.RETRIEVAL_LOG, "item_id"): "memory",
    (schemas.RETRIEVAL_LOG, "episode_id"): "episode",
    (schemas.REWARD_EVENTS, "memory_id"): "memory",
    (schemas.REWARD_EVENTS, "episode_id"): "episode",
    (schemas.MERGES, "memory_id"): "memory",
    (schemas.MEMORY_HISTORY, "memory_id"): "memory",
    (schemas.LESSON_LOG, "memory_id"): "memory",
    (schemas.VALIDATIONS, "episode_id"): "episode",
}
# A restore drops each dependent row (not a memory's or an episode's own: the insert-only
# merge keeps the Pack's) whose columns here name an existing row.
_OWNER: dict[str, tuple[str, ...]] = {}
for _table, _column in ID_COLUMNS:
    if _table not in (schemas.MEMORIES, schemas.EPISODES):
        _OWNER[_table] = (*_OWNER.get(_table, ()), _column)


@dataclass
class Rebinding:
    """The file's ids the Pack already holds, by kind, and what each becomes: a fresh id
    (``fresh``), or nothing, the rows naming it dropped (``fresh`` False)."""

    taken: dict[str, set[str]] = field(default_factory=dict)
    fresh: bool = True
    new: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not any(self.taken.values())


def existing(store: PackStore, held: dict[str, set[str]], fresh: bool) -> Rebinding:
    """Which of the file's memory and episode ids (``held``) the Pack already holds."""
    found: dict[str, set[str]] = {}
    for kind, table in (("memory", schemas.MEMORIES), ("episode", schemas.EPISODES)):
        ids = sorted(held.get(table, set()))
        found[kind] = set()
        if not store.has_table(table):
            continue
        for start in range(0, len(ids), _ID_CHUNK):
            clause = in_clause("id", ids[start : start + _ID_CHUNK])
            found[kind].update(store.scan(table, ["id"], clause)["id"].to_pylist())
    binding = Rebinding(found, fresh)
    if fresh:
        nonce = uuid.uuid4().hex  # this import's: the same file imported twice lands twice
        binding.new = {
            kind: {i: f"{i[:2]}{stable_hash(i, 'imported', nonce)}" for i in ids}
            for kind, ids in found.items()
        }
    return binding


def rebound(name: str, batch: pa.Table, binding: Rebinding) -> pa.Table:
    """``batch`` of table ``name`` with the Pack's ids rebound (the module docstring)."""
    if binding.empty:
        return batch
    if not binding.fresh:
        keep = None
        for column in _OWNER.get(name, ()):
            taken = _values(binding.taken[ID_COLUMNS[(name, column)]])
            hit = pc.is_in(batch.column(column), value_set=taken)
            miss = pc.invert(pc.fill_null(hit, False))
            keep = miss if keep is None else pc.and_(keep, miss)
        return batch if keep is None else batch.filter(keep)
    for (table, column), kind in ID_COLUMNS.items():
        if table == name and column in batch.column_names and binding.new[kind]:
            index = batch.schema.get_field_index(column)
            values = _mapped(batch.column(column), binding.new[kind])
            batch = batch.set_column(index, batch.schema.field(index), values)
    return batch


def _values(ids: Iterable[str]) -> pa.Array:
    return pa.array(sorted(ids), pa.string())


def _mapped(column: pa.ChunkedArray, mapping: dict[str, str]) -> pa.ChunkedArray:
    """``column`` (strings, or lists of strings) with each value in ``mapping`` replaced."""
    keys = _values(mapping)
    news = pa.array([mapping[k] for k in keys.to_pylist()], pa.string())
    chunks = []
    for chunk in column.chunks:
        if pa.types.is_list(chunk.type) or pa.types.is_large_list(chunk.type):
            flat = _replace(chunk.values, keys, news)  # what the offsets index
            remade = type(chunk).from_arrays(chunk.offsets, flat, mask=chunk.is_null())
            chunks.append(remade.cast(chunk.type))
        else:
            chunks.append(_replace(chunk, keys, news))
    return pa.chunked_array(chunks, type=column.type)


def _replace(values: pa.Array, keys: pa.Array, news: pa.Array) -> pa.Array:
    at = pc.index_in(values, value_set=keys)
    return pc.if_else(pc.is_valid(at), pc.take(news, at), values)
