"""Near-duplicate memories remembered at the same instant by several processes.

``remember`` merges a new memory into a stored one at cosine >= ``dedup_threshold``. Two
processes remembering near-duplicates at once both find nothing to merge into (neither
has committed yet) and both create a row: three processes, three memories, where one
process would have stored one (issue 23). So a created memory is *settled* right after
its commit, against the latest version of the table, whenever another commit to
``memories`` came between ``remember``'s look and its own (otherwise no racer can have
slipped in before it, and one that commits after it sees it and settles itself):

- its **cluster** is every memory of its scope at cosine >= ``dedup_threshold`` to it.
  Before the commit there was none (``remember`` looked, at the latest version), so any
  other member was committed by a racing process in between;
- the **winner** is the member committed first: the one present at the earliest
  version of ``memories`` (found by time travel, only when there is a race). Every
  racer sees the first committer (it committed before them), so all name the same one,
  and it never moves: what ``remember`` returned to its caller stays true;
- a racer that is not the winner **folds itself** into it, as if it had been merged in
  sequence: its text is logged as the winner's merge (a ``merges`` row, keyed so a
  repeat logs nothing twice), its row is deleted, any merges it absorbed meanwhile move
  to the winner, and the winner's ``merge_count`` is raised to its logged merges; its
  caller gets the winner's id, "merged".

A correction races too (issue 30): only members that are the same fact as the racer
(:meth:`packs.corrections.Corrections.judge`) are its twins and fold as above; a member
committed before it that says something else is superseded by it, as a sequential
correction would have done (the newest fact wins), and what a folded racer superseded
now names the winner.

A racer that already took part in an episode or a reward is never folded (its learned
state would be lost): it stays, as a duplicate, as does the row of a process that died
between its commit and its settling. Another process may recall a racer in the instant
before it folds: the delete takes only an unused row, and uses flushed after it go to
the winner (:mod:`packs.store.merges`), so no use is lost. Measured with
``benchmarks/dedup_race.py`` (docs/dedup.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs.corrections import COMPARED_COLUMNS, Corrections, correction_reason, cosine
from packs.errors import InvalidInput
from packs.recall.ranking import similarity_from_distance
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import VECTOR_COLUMN, PackStore
from packs.store.lifecycle import NOT_SUPERSEDED
from packs.store.rows import merge_row

# Members of one cluster looked at (hand-set: a burst of near-duplicates from a few
# dozen processes; a bigger one settles over several remembers).
CLUSTER_LIMIT = 32
_COLUMNS = list(
    dict.fromkeys(
        [
            "id",
            "intent_text",
            "response_summary",
            "outcome",
            "metadata_json",
            "source",
            "usage_count",
            "reward_count",
            "merge_count",
            VECTOR_COLUMN,
            *COMPARED_COLUMNS,
        ]
    )
)
_UNUSED = "usage_count = 0 AND reward_count = 0"
_MERGE_COLUMNS = [
    "intent_text",
    "response_summary",
    "outcome",
    "metadata_json",
    "source",
    "similarity",
    "at",
]


@dataclass(frozen=True)
class Settled:
    """Where a created memory ended: ``memory_id`` is the cluster's winner, with the
    cosine of the created memory to it (None when it is the winner itself)."""

    memory_id: str
    similarity: float | None
    superseded: tuple[str, ...] = ()  # earlier racers it superseded (other facts)


def settle(
    store: PackStore,
    memory_id: str,
    vector: np.ndarray,
    scope_clause: str,
    threshold: float,
    corrections: Corrections | None = None,
    response_threshold: float = 0.0,
) -> Settled:
    """Settle the just-created memory ``memory_id`` against racing near-duplicates; with
    ``corrections``, only the same fact is a twin and an earlier other fact is superseded."""
    store.latest_version(schemas.MEMORIES)  # every commit before ours, other processes' too
    where = f"kind = {sql_literal(schemas.KIND_MEMORY)} AND {scope_clause}"
    if corrections is not None:
        where += f" AND {NOT_SUPERSEDED}"
    found = store.search(schemas.MEMORIES, vector, _COLUMNS, where, limit=CLUSTER_LIMIT)
    near = similarity_from_distance(found["_distance"].to_numpy()) >= threshold
    members = {m["id"]: m for m in found.filter(pa.array(near)).to_pylist()}
    me = members.get(memory_id)
    if me is None or len(members) == 1:
        return Settled(memory_id, None)  # no race
    first = first_versions(store, list(members))
    superseded: list[str] = []
    if corrections is not None:
        now = datetime.now(UTC)
        for other in [m for m in members if m != memory_id]:
            verdict = corrections.judge(
                members[other], me, me["response_embedding"], response_threshold
            )
            if verdict.repeat:
                continue
            if first[other] < first[memory_id]:  # the newest fact wins
                corrections.mark(other, memory_id, correction_reason(verdict), now)
                superseded.append(other)
            del members[other]
    winner = members[min(members, key=lambda m: (first[m], m))]
    done = Settled(memory_id, None, tuple(superseded))
    if winner["id"] == memory_id or me["usage_count"] or me["reward_count"]:
        return done
    if not _fold(store, winner, me):
        return done
    if corrections is not None:
        corrections.repoint(memory_id, winner["id"], datetime.now(UTC))
    return Settled(winner["id"], cosine(vector, winner[VECTOR_COLUMN]), tuple(superseded))


def first_versions(store: PackStore, ids: list[str]) -> dict[str, int]:
    """The earliest version of ``memories`` holding each row of ``ids`` (all present in
    the latest), by binary search over the versions kept. A version removed by cleanup
    meanwhile counts as holding none of them (they are fresh rows)."""
    versions = [v["version"] for v in store.versions(schemas.MEMORIES)]
    out = {}
    for memory_id in ids:
        lo, hi = 0, len(versions) - 1  # present at versions[hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if _holds(store, memory_id, versions[mid]):
                hi = mid
            else:
                lo = mid + 1
        out[memory_id] = versions[hi]
    return out


def _holds(store: PackStore, memory_id: str, version: int) -> bool:
    try:
        return store.count(schemas.MEMORIES, f"id = {sql_literal(memory_id)}", version=version) > 0
    except InvalidInput:  # the version was cleaned up since it was listed
        return False


def _fold(store: PackStore, winner: dict[str, Any], loser: dict[str, Any]) -> bool:
    """Log the loser as the winner's merge, delete it, then move the merges it held;
    False (nothing changed) when another process used it meanwhile.

    Deleting before moving: a process that merges into a loser at the same moment checks
    afterwards that the loser still exists (``remember``), and if not, merges again into
    the winner; if it did exist then, its merge was logged before the delete, so the
    move below carries it. The delete takes only a row nobody used: a use another
    process flushed first keeps the loser (its learned state stays), and one flushed
    after the delete finds the merge logged here and goes to the winner
    (:func:`packs.store.merges.folded_into`)."""
    now = datetime.now(UTC)
    row = merge_row(
        winner["id"],
        loser["intent_text"],
        loser["response_summary"] or "",
        loser["outcome"],
        json.loads(loser["metadata_json"] or "{}"),
        loser["source"] or "api",
        cosine(loser[VECTOR_COLUMN], winner[VECTOR_COLUMN]),
        now,
    )
    _log_merges(store, [row])
    ids = [loser["id"]]
    store.delete(schemas.MEMORIES, f"{in_clause('id', ids)} AND {_UNUSED}")
    store.latest_version(schemas.MEMORIES)
    if store.count(schemas.MEMORIES, in_clause("id", ids)):  # used meanwhile: it stays
        store.delete(schemas.MERGES, in_clause("merge_id", [row["merge_id"]]))
        # another writer may have counted the withdrawn merge meanwhile: count again
        raise_merge_count(store, winner["id"], -1, now, exact=True)
        return False
    held = store.scan(schemas.MERGES, ["memory_id", *_MERGE_COLUMNS], in_clause("memory_id", ids))
    moved = [
        merge_row(
            winner["id"],
            m["intent_text"],
            m["response_summary"],
            m["outcome"],
            json.loads(m["metadata_json"] or "{}"),
            m["source"],
            m["similarity"],
            m["at"],
        )
        for m in held.to_pylist()
    ]
    _log_merges(store, moved)
    raise_merge_count(store, winner["id"], int(winner["merge_count"] or 0), now)
    return True


def _log_merges(store: PackStore, rows: list[dict[str, Any]]) -> None:
    if rows:
        table = pa.Table.from_pylist(rows, schema=schemas.MERGES_SCHEMA)
        store.merge(schemas.MERGES, table, "merge_id")


def raise_merge_count(
    store: PackStore, memory_id: str, counted: int, now: datetime, *, exact: bool = False
) -> None:
    """Set ``merge_count`` to the number of distinct merges logged for ``memory_id``, only
    ever raising it: a writer that counted before another's merge can't undo it, and a
    re-run after a crash between the two writes repairs the count. ``counted`` is the
    count read with the memory: counts only grow, so at or above the log it is current.
    ``exact`` sets the count to the log's even if lower: after a fold's merge was
    withdrawn (:func:`_fold`), which a writer in between may have counted."""
    clause = f"memory_id = {sql_literal(memory_id)}"
    logged = len(set(store.scan(schemas.MERGES, ["merge_id"], clause)["merge_id"].to_pylist()))
    if counted >= logged and not exact:
        return
    full = store.schema(schemas.MEMORIES)
    columns = {"id": [memory_id], "merge_count": [logged], "updated_at": [now]}
    count = pa.table(columns, schema=pa.schema([full.field(c) for c in columns]))
    store.merge(
        schemas.MEMORIES,
        count,
        "id",
        update=f"target.merge_count {'<>' if exact else '<'} source.merge_count",
        insert=False,
    )
