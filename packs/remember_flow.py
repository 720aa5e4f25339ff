"""The write path of one memory (``remember``): merge a repeat, supersede a correction,
create a new memory, and settle it against racing writers.

:class:`packs.memories.MemoryWriter` checks the input and builds the row; this flow
decides what happens to it under the handle's lock:

1. the same id stored already: a retried call, or a fact said again (:meth:`_again`);
2. the nearest current memory of the scope at intent cosine >= ``dedup_threshold``:
   a repeat merges into it (a ``merges`` row), a correction is created and supersedes
   it (:mod:`packs.corrections`);
3. otherwise the row is created; a commit that raced another writer's is settled
   (:mod:`packs.near_duplicates`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs.admission.compare import Judgement
from packs.admission.policy import (
    empty_reason,
    hold_reason,
    predicted_utility,
    reworded_correction,
)
from packs.corrections import COMPARED_COLUMNS, Corrections, correction_reason
from packs.near_duplicates import raise_merge_count, settle
from packs.probation import Probation
from packs.recall.ranking import similarity_from_distance
from packs.records import RememberResult
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.lifecycle import NOT_SUPERSEDED, unexpired_clause
from packs.store.rows import merge_row
from packs.store.scopes import same_scope_clause

_NEAREST_COLUMNS = ["id", "merge_count", "held_at", *COMPARED_COLUMNS]
# Merges tried before creating: each retry follows a near-duplicate that a racing process
# folded into another meanwhile (hand-set; one retry is what a race needs).
_MERGE_ATTEMPTS = 3


@dataclass(frozen=True)
class Admit:
    """What admission control weighs from the caller: its confidence in the memory (0-1,
    None: not said) and the episode it was remembered from (a positive reward of that
    episode confirms a held memory)."""

    confidence: float | None = None
    episode_id: str | None = None


class RememberFlow:
    """Decides and writes what one ``remember`` does in one Pack (the caller holds the
    handle's lock)."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        corrections: Corrections,
        schema: pa.Schema,
    ) -> None:
        self._store = store
        self._settings = settings
        self.corrections = corrections
        self._schema = schema  # of ``memories`` rows
        self._probation = Probation(store)

    def write(
        self,
        row: dict[str, Any],
        response_vec: np.ndarray,
        scope: str | None,
        now: datetime,
        admit: Admit | None = None,
        stated: str | None = None,
    ) -> RememberResult:
        """Merge ``row`` into the stored memory of its situation when it repeats it, or
        store it: alone, or superseding the one it corrects. With the Pack's admission
        policy on, ``admit`` (the caller's confidence and episode) goes through the gate
        first (packs/admission/policy.py). A correction the caller ``stated`` (the id it
        supersedes) is stored and supersedes it, never merged."""
        if stated is not None:
            seen = self._store.latest_version(schemas.MEMORIES)
            verdict = Judgement(False, "stated by the caller (supersedes=)")
            intent_vec = np.asarray(row["intent_embedding"])
            return self._create(row, intent_vec, scope, seen, (stated, None, verdict))
        if self._settings.value.admission.policy == "off":
            admit = None
        elif admit is None:
            admit = Admit()
        return self._write(
            row, np.asarray(row["intent_embedding"]), response_vec, scope, now, admit
        )

    def screen(self, intent: str, response: str) -> RememberResult | None:
        """With the admission policy on, the refusal of an empty or boilerplate memory
        (None: it goes on; checked before anything is embedded)."""
        a = self._settings.value.admission
        empty = empty_reason(intent, response, a.min_content_words) if a.policy == "on" else None
        return None if empty is None else RememberResult(None, "refused", None, reason=empty)

    def _write(
        self,
        row: dict[str, Any],
        intent_vec: np.ndarray,
        response_vec: np.ndarray,
        scope: str | None,
        now: datetime,
        admit: Admit | None,
    ) -> RememberResult:
        """Merge ``row`` into the stored memory of its situation when it repeats it, or
        store it: alone, or superseding the one it corrects (packs/corrections.py)."""
        s = self._settings.value
        seen, nearest, similarity = 0, None, 0.0
        for _ in range(_MERGE_ATTEMPTS):
            if self._store.count(schemas.MEMORIES, f"id = {sql_literal(row['id'])}"):
                return self._again(row, response_vec, scope, now)  # a retried call
            seen = self._store.latest_version(schemas.MEMORIES)  # others' commits too
            nearest, similarity = self._nearest_memory(intent_vec, scope, now)
            if nearest is None or similarity < s.dedup_threshold:
                break
            verdict = self.corrections.judge(nearest, row, response_vec, s.correction_threshold)
            if not verdict.repeat:
                return self._create(
                    row, intent_vec, scope, seen, (nearest["id"], similarity, verdict)
                )
            merge = _merge_into(nearest, row, similarity, now)
            if self._absorb(merge, nearest["merge_count"] or 0):
                confirmed = self._confirm(nearest, now)
                return RememberResult(nearest["id"], "merged", similarity, reason=confirmed)
            # folded into another near-duplicate meanwhile (packs/near_duplicates.py)
            nearest = None
        if admit is not None:
            decided = self._admit(row, response_vec, scope, now, seen, nearest, similarity, admit)
            if decided is not None:
                return decided
        return self._create(row, intent_vec, scope, seen, None)

    def _admit(
        self,
        row: dict[str, Any],
        response_vec: np.ndarray,
        scope: str | None,
        now: datetime,
        seen: int,
        nearest: dict[str, Any] | None,
        similarity: float,
        admit: Admit,
    ) -> RememberResult | None:
        """Admission control past the merge threshold: refuse what a current memory
        already says, supersede a reworded correction, hold what is doubtful (None: store
        it as usual)."""
        s = self._settings.value
        a = s.admission
        intent_vec = np.asarray(row["intent_embedding"])
        if nearest is not None and similarity >= min(a.novelty_floor, a.correction_band):
            verdict = self.corrections.judge(nearest, row, response_vec, s.correction_threshold)
            if verdict.repeat and similarity >= a.novelty_floor:
                confirmed = self._confirm(nearest, now)
                reason = (
                    f"redundant: memory {nearest['id']} already says this (intent cosine "
                    f"{similarity:.2f}, the Pack's admission.novelty_floor is {a.novelty_floor})"
                )
                return RememberResult(
                    None, "refused", similarity, reason=_joined(reason, confirmed)
                )
            comparison = self.corrections.compare(nearest, row, response_vec)
            flipped = "polarity" in verdict.reason
            if not verdict.repeat and reworded_correction(
                comparison, similarity, a.correction_band, a.correction_subject, flipped
            ):
                return self._create(
                    row, intent_vec, scope, seen, (nearest["id"], similarity, verdict)
                )
        expiry = unexpired_clause(now)
        neighbours = self._probation.neighbours(intent_vec, scope, a.utility_neighbours, expiry)
        predicted = predicted_utility(neighbours, a.utility_min_evidence)
        hold = hold_reason(admit.confidence, predicted, a.hold_confidence, a.hold_utility)
        if hold is None:
            return None
        row.update(held_at=now, held_reason=hold, held_episode=admit.episode_id)
        made = self._create(row, intent_vec, scope, seen, None)
        return replace(made, status="held", reason=hold) if made.status == "created" else made

    def _confirm(self, memory: Mapping[str, Any], now: datetime) -> str | None:
        """A repeat confirms a memory on probation: the reason to say so (None if not held)."""
        if memory.get("held_at") is None or not self._probation.confirm([memory["id"]], now):
            return None
        return f"confirmed memory {memory['id']}, which was on probation"

    def _create(
        self,
        row: dict[str, Any],
        intent_vec: np.ndarray,
        scope: str | None,
        seen: int,
        corrects: tuple[str, float | None, Judgement] | None,
    ) -> RememberResult:
        """Commit ``row``; mark what it ``corrects`` superseded by it, then settle it
        against racing near-duplicates when another commit came between the look (at
        version ``seen``) and ours."""
        s = self._settings.value
        table = pa.Table.from_pylist([row], schema=self._schema)
        self._store.merge(schemas.MEMORIES, table, "id")
        raced = self._store.committed_version(schemas.MEMORIES) != seen + 1
        old, similarity, reason = None, None, None
        if corrects is not None:
            old, similarity, verdict = corrects
            reason = verdict.reason
            self.corrections.mark(old, row["id"], correction_reason(verdict), row["created_at"])
        if raced:  # maybe a racing near-duplicate (a later racer sees ours and settles itself)
            settled = settle(
                self._store,
                row["id"],
                intent_vec,
                same_scope_clause(scope),
                s.dedup_threshold,
                self.corrections,
                s.correction_threshold,
            )
            old = old or next(iter(settled.superseded), None)
            if settled.memory_id != row["id"]:  # a racing process created it first
                return RememberResult(settled.memory_id, "merged", settled.similarity, old)
        if old is not None:
            reason = reason or "a racing remember of the same situation said something else"
            return RememberResult(row["id"], "superseded", similarity, old, reason)
        return RememberResult(row["id"], "created", None)

    def _again(
        self, row: dict[str, Any], response_vec: np.ndarray, scope: str | None, now: datetime
    ) -> RememberResult:
        """The memory is stored already: a retried call, or a fact said again after a
        correction. Against the current memory of its situation it is a repeat (nothing
        to do; a superseded one merges into it), or it corrects it: what a call that
        stopped before its mark left to do, or a fact that changed back."""
        s = self._settings.value
        nearest, similarity = self._nearest_memory(
            np.asarray(row["intent_embedding"]), scope, now, besides=row["id"]
        )
        stored = self._store.get(
            schemas.MEMORIES, f"id = {sql_literal(row['id'])}", ["superseded_at"]
        )
        superseded = bool(stored) and stored[0]["superseded_at"] is not None
        verdict = None
        if nearest is not None and similarity >= s.dedup_threshold:
            verdict = self.corrections.judge(nearest, row, response_vec, s.correction_threshold)
        if verdict is not None and verdict.repeat:
            if superseded and nearest is not None:
                merge = _merge_into(nearest, row, similarity, now)
                if self._absorb(merge, nearest["merge_count"] or 0):
                    return RememberResult(nearest["id"], "merged", similarity)
            return RememberResult(row["id"], "exists", 1.0)
        if superseded:  # said again after its correction: current again
            self.corrections.clear(row["id"], now)
        if verdict is None or nearest is None:
            return RememberResult(row["id"], "exists", 1.0)
        self.corrections.mark(nearest["id"], row["id"], correction_reason(verdict), now)
        return RememberResult(row["id"], "superseded", similarity, nearest["id"], verdict.reason)

    def _absorb(self, row: dict[str, Any], counted: int) -> bool:
        """Log a near-duplicate (a ``merges`` row) and count it, without rewriting the
        memory; False when the memory is gone (folded into another by a racing process).

        The memory keeps its text and learned state; the merge's provenance is an
        append-only row (concurrent merges can't overwrite each other), counted by
        :func:`packs.near_duplicates.raise_merge_count`. ``counted`` is the count read
        with the nearest memory.
        """
        memory_id = row["memory_id"]
        table = pa.Table.from_pylist([row], schema=schemas.MERGES_SCHEMA)
        self._store.merge(schemas.MERGES, table, "merge_id")
        self._store.latest_version(schemas.MEMORIES)
        if not self._store.count(schemas.MEMORIES, f"id = {sql_literal(memory_id)}"):
            return False
        raise_merge_count(self._store, memory_id, counted, row["at"])
        return True

    def _nearest_memory(
        self, vector: np.ndarray, scope: str | None, now: datetime, besides: str | None = None
    ) -> tuple[dict[str, Any] | None, float]:
        """The nearest current memory of ``scope`` (not ``besides``) and its similarity."""
        clause = f"kind = {sql_literal(schemas.KIND_MEMORY)} AND {same_scope_clause(scope)}"
        clause += f" AND {NOT_SUPERSEDED} AND {unexpired_clause(now)}"
        if besides is not None:
            clause += f" AND id != {sql_literal(besides)}"
        hits = self._store.search(schemas.MEMORIES, vector, _NEAREST_COLUMNS, clause, limit=1)
        if not hits.num_rows:
            return None, 0.0
        nearest = hits.to_pylist()[0]
        distance = np.array([nearest.pop("_distance")])
        return nearest, float(similarity_from_distance(distance)[0])


def _joined(*parts: str | None) -> str:
    return "; ".join(p for p in parts if p)


def _metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    return dict(json.loads(row["metadata_json"])) if row["metadata_json"] else {}


def _merge_into(
    nearest: Mapping[str, Any], row: Mapping[str, Any], similarity: float, now: datetime
) -> dict[str, Any]:
    """The merge of ``row`` (a repeat) into the stored memory ``nearest``."""
    return merge_row(
        nearest["id"],
        row["intent_text"],
        row["response_summary"],
        row["outcome"],
        _metadata(row),
        row["source"],
        similarity,
        now,
    )
