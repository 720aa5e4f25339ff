"""A correction supersedes; it is never absorbed (issue 30).

``remember`` meets a stored memory of the same situation (intent cosine at least
``dedup_threshold``). A repeat of it merges, as before; a different response, polarity or
outcome (:func:`packs.admission.compare.judge`, measured in docs/corrections.md) is a new
fact: it is stored and supersedes the old memory, which stays as marked history
(``get``, ``history``) and is never recalled again. This module judges the pair and
writes the marks; :mod:`packs.memories` runs the write path and
:mod:`packs.near_duplicates` settles racing writers the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs.admission.compare import Comparison, Judgement, compare_responses, judge
from packs.embeddings.pack_embedder import PackEmbedder
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

# What a stored memory is compared by (besides its id): see judge().
COMPARED_COLUMNS = ["response_summary", "response_embedding", "outcome", "signal_polarity"]
_MARK_COLUMNS = ("id", "superseded_by", "superseded_at", "superseded_reason", "updated_at")


class Corrections:
    """Judges repeats against corrections and marks superseded memories in one Pack."""

    def __init__(self, store: PackStore, embedder: PackEmbedder) -> None:
        self._store = store
        self._embedder = embedder

    def judge(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        new_response: np.ndarray,
        threshold: float,
    ) -> Judgement:
        """``new`` (a row, its response embedding ``new_response``) against ``old``."""
        stored = old.get("response_embedding")
        response_cosine = 1.0 if stored is None else cosine(stored, new_response)
        outcome_cosine = None
        before, after = old.get("outcome"), new.get("outcome")
        if before and after:  # embedded only when both have one (two short texts)
            pair = self._embedder.embed([before, after])
            outcome_cosine = cosine(pair[0], pair[1])
        return judge(old, new, response_cosine, outcome_cosine, threshold)

    def compare(
        self, old: Mapping[str, Any], new: Mapping[str, Any], new_response: np.ndarray
    ) -> Comparison:
        """The response checks of ``new`` against ``old`` (no polarity, no outcome)."""
        stored = old.get("response_embedding")
        response_cosine = 1.0 if stored is None else cosine(stored, new_response)
        return compare_responses(
            old.get("response_summary") or "", new.get("response_summary") or "", response_cosine
        )

    def mark(self, memory_id: str, by: str | None, reason: str | None, now: datetime) -> None:
        """Mark ``memory_id`` superseded ``by`` another memory (or by nothing); marking
        it again replaces the mark."""
        self._write_marks([memory_id], by, reason, now)

    def clear(self, memory_id: str, now: datetime) -> None:
        """``memory_id`` is current again (a fact said again after its correction)."""
        self._write_marks([memory_id], None, None, now, at=None)

    def repoint(self, loser: str, winner: str, now: datetime) -> None:
        """Memories superseded by ``loser`` (folded into ``winner`` by a race) are now
        superseded by ``winner``, with their reasons kept."""
        clause = f"superseded_by = {sql_literal(loser)}"
        rows = self._store.scan(schemas.MEMORIES, ["id", "superseded_reason"], clause)
        for row in rows.to_pylist():
            self._write_marks([row["id"]], winner, row["superseded_reason"], now)

    def _write_marks(
        self,
        ids: list[str],
        by: str | None,
        reason: str | None,
        now: datetime,
        *,
        at: datetime | bool | None = True,
    ) -> None:
        full = self._store.schema(schemas.MEMORIES)
        stamp = now if at is True else at
        columns = {
            "id": ids,
            "superseded_by": [by] * len(ids),
            "superseded_at": [stamp] * len(ids),
            "superseded_reason": [reason] * len(ids),
            "updated_at": [now] * len(ids),
        }
        table = pa.table(columns, schema=pa.schema([full.field(c) for c in _MARK_COLUMNS]))
        self._store.merge(schemas.MEMORIES, table, "id", update=True, insert=False)


def cosine(a: Any, b: Any) -> float:
    """The cosine of two vectors (0.0 when either is zero)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y / norms) if norms else 0.0


def correction_reason(verdict: Judgement) -> str:
    """The reason a memory superseded by a correction carries: what changed."""
    return f"corrected by a newer memory of the same situation: {verdict.reason}"
