"""Phase A on LanceDB: the cosine, BM25 and by-id searches when the vector cache stands
aside (too many rows to hold, a pinned version, a one-shot handle)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from packs.recall.ranking import similarity_from_distance
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.fulltext import SCORE_COLUMN, text_search
from packs.store.gateway import VECTOR_COLUMN, PackStore

CANDIDATE_COLUMNS = [
    "id", "kind", "intent_text", "response_summary", "experience_summary", "utility",
    "confidence", "usage_count", "reward_count", "signal_polarity", "source", "title",
    "start_s", "end_s", "source_position",
]  # fmt: skip


# LanceDB's filtered search over-fetches this many times k1 unfiltered, then filters.
# Hand-set: k1 rows are very likely to pass a filter that most rows pass (the visibility
# clause of a Pack with few scoped rows); otherwise the prefiltered search runs.
POSTFILTER_OVERFETCH = 4


def indexed_top_k(store: PackStore, vector: np.ndarray, k1: int, clause: str | None) -> pa.Table:
    """LanceDB's top-``k1`` under ``clause``: first the unfiltered top ``4 k1`` filtered
    afterwards, which is exact whenever ``k1`` of them pass (every passing row beyond
    them is further away), then, if fewer pass, the prefiltered search. Evaluating the
    clause on every row costs about 45 ms at 1M rows (docs/recall.md); on a few dozen
    found rows it is free."""
    if clause is not None:
        found = store.search(
            schemas.MEMORIES, vector, CANDIDATE_COLUMNS, clause,
            limit=k1 * POSTFILTER_OVERFETCH, prefilter=False,
        )  # fmt: skip
        if found.num_rows >= k1:
            return found.slice(0, k1)
    return store.search(schemas.MEMORIES, vector, CANDIDATE_COLUMNS, clause, limit=k1)


def indexed_lexical(
    store: PackStore,
    text: str | None,
    vector: np.ndarray,
    k1: int,
    clause: str | None,
    columns: dict[str, list[Any]],
) -> tuple[list[str] | None, np.ndarray, np.ndarray]:
    """LanceDB's BM25 top-``k1`` under ``clause`` (its full-text index): its ids (None
    without the index) and scores; the rows not yet in ``columns`` are appended to it,
    and their cosine similarities returned last."""
    none = np.zeros(0)
    if text is None:
        return [], none, none
    found = text_search(store, text, [*CANDIDATE_COLUMNS, VECTOR_COLUMN], clause, k1)
    if found is None:
        return None, none, none
    lex_ids = found["id"].to_pylist()
    pooled = set(columns["id"])
    new = [i for i, m in enumerate(lex_ids) if m not in pooled]
    added = none
    if new:
        rows = found.take(pa.array(new, type=pa.int64()))
        for column in CANDIDATE_COLUMNS:
            columns[column] += rows[column].to_pylist()
        added = cosine(rows[VECTOR_COLUMN], vector)
    return lex_ids, found[SCORE_COLUMN].to_numpy().astype(np.float64), added


def cosine(column: pa.ChunkedArray, vector: np.ndarray) -> np.ndarray:
    matrix = np.asarray(column.to_pylist(), dtype=np.float64)
    q = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(q)), 1e-12)
    return np.divide(matrix @ q, norms, out=np.zeros(len(matrix)), where=norms > 0)


def indexed_rows(
    store: PackStore, vector: np.ndarray, ids: Sequence[str], clause: str | None,
    columns: dict[str, list[Any]],
) -> np.ndarray:  # fmt: skip
    """Append the rows of ``ids`` that ``clause`` allows to ``columns`` (links and
    neighbours: candidates found by id), and return their cosine similarities."""
    if not ids:
        return np.zeros(0)
    id_clause = f"id IN ({', '.join(sql_literal(m) for m in ids)})"
    where = id_clause if clause is None else f"({clause}) AND {id_clause}"
    extra = store.search(schemas.MEMORIES, vector, CANDIDATE_COLUMNS, where, limit=len(ids))
    for column in CANDIDATE_COLUMNS:
        columns[column] += extra[column].to_pylist()
    return similarity_from_distance(extra["_distance"].to_numpy())
