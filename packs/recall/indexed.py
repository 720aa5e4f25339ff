"""Phase A on LanceDB: the cosine, BM25 and by-id searches when the vector cache stands
aside (too many rows to hold, a pinned version, a one-shot handle)."""

from __future__ import annotations

import time
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
    "id",
    "kind",
    "intent_text",
    "response_summary",
    "experience_summary",
    "utility",
    "confidence",
    "usage_count",
    "reward_count",
    "signal_polarity",
    "source",
    "title",
    "start_s",
    "end_s",
    "source_position",
]


# LanceDB's filtered search over-fetches this many times k1 unfiltered, then filters.
# Hand-set: k1 rows are very likely to pass a filter that most rows pass (the visibility
# clause of a Pack with few scoped rows); otherwise the prefiltered search runs.
POSTFILTER_OVERFETCH = 4
# Up to this many visible rows, the prefiltered search compares every one of them (exact)
# instead of probing the vector index, which sees only the rows of the partitions it
# probes (20 of 250 at 1M): a scope's 1,000 rows among 1M cost about 20-30 ms that way
# (measured, docs/recall.md). Above it the rows are dense enough for the probes.
EXACT_ROWS = 20_000
_TAGS_RECHECK_S = 30.0  # hand-set: how often a handle looks again for the tags index


def indexed_top_k(
    store: PackStore, vector: np.ndarray, k1: int, clause: str | None, visible: str | None = None
) -> pa.Table:
    """LanceDB's top-``k1`` under ``clause``. First the unfiltered top ``4 k1`` filtered
    afterwards, which is exact whenever ``k1`` of them pass (every passing row beyond
    them is further away; evaluating the clause on every row cost about 45 ms at 1M rows,
    on a few dozen found rows it is free), then, if fewer pass, the prefiltered search.

    ``visible`` (the scope part of ``clause``) is counted first when maintenance's tags
    index answers it (about 1 ms): too few visible rows for the over-fetch to find ``k1``
    skip it, none means nothing to find, and at most :data:`EXACT_ROWS` are searched
    exactly (a scope of a Pack shared by many users)."""
    allowed = visible_rows(store, visible) if clause is not None else None
    if allowed == 0:
        return store.search(schemas.MEMORIES, vector, CANDIDATE_COLUMNS, "FALSE", limit=k1)
    total = store.count(schemas.MEMORIES) if allowed is not None else 0
    if clause is not None and (allowed is None or allowed * POSTFILTER_OVERFETCH >= total):
        found = store.search(
            schemas.MEMORIES,
            vector,
            CANDIDATE_COLUMNS,
            clause,
            limit=k1 * POSTFILTER_OVERFETCH,
            prefilter=False,
        )
        if found.num_rows >= k1:
            return found.slice(0, k1)
    exact = allowed is not None and allowed <= EXACT_ROWS
    return store.search(schemas.MEMORIES, vector, CANDIDATE_COLUMNS, clause, limit=k1, exact=exact)


def visible_rows(store: PackStore, visible: str | None) -> int | None:
    """Rows ``visible`` lets through, when the tags index answers it; else None (counting
    would read every row's tags). The index is looked for again every 30 s until seen."""
    if visible is None:
        return None
    checked, indexed = store.tags_checked
    if not indexed and time.monotonic() - checked > _TAGS_RECHECK_S:
        indexed = "tags" in store.indexed_columns(schemas.MEMORIES)
        store.tags_checked = (time.monotonic(), indexed)
    return store.count(schemas.MEMORIES, visible) if indexed else None


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
    store: PackStore,
    vector: np.ndarray,
    ids: Sequence[str],
    clause: str | None,
    columns: dict[str, list[Any]],
) -> np.ndarray:
    """Append the rows of ``ids`` that ``clause`` allows to ``columns`` (links and
    neighbours: candidates found by id), and return their cosine similarities."""
    if not ids:
        return np.zeros(0)
    id_clause = f"id IN ({', '.join(sql_literal(m) for m in ids)})"
    where = id_clause if clause is None else f"({clause}) AND {id_clause}"
    extra = store.search(
        schemas.MEMORIES, vector, CANDIDATE_COLUMNS, where, limit=len(ids), exact=True
    )  # every one of them, wherever the index would have put it
    for column in CANDIDATE_COLUMNS:
        columns[column] += extra[column].to_pylist()
    return similarity_from_distance(extra["_distance"].to_numpy())
