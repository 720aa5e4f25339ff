"""Filling a :class:`~packs.recall.context.ContextIndex` from a Pack's logs: the newest
rewards of each memory with their episodes' query vectors (two reads, then only
in-memory updates as rewards arrive)."""

from __future__ import annotations

import numpy as np
import polars as pl

from packs.recall.context import ContextIndex
from packs.store import schemas
from packs.store.filters import in_clause
from packs.store.gateway import PackStore

_EPISODE_BATCH = 1_000  # episode ids per read


def load_context(index: ContextIndex, store: PackStore) -> None:
    """Fill ``index`` once (the caller flushes first so its own rewards are included)."""
    if index.loaded:
        return
    events = pl.DataFrame(
        store.scan(
            schemas.REWARD_EVENTS,
            ["episode_id", "memory_id", "value", "created_at", "writer", "seq"],
            "weight > 0",
        )
    )
    recent = (
        events.sort(["created_at", "writer", "seq"])
        .group_by("memory_id", maintain_order=True)
        .tail(index.history)
    )
    vectors: dict[str, np.ndarray] = {}
    episode_ids = recent["episode_id"].unique().to_list()
    for start in range(0, len(episode_ids), _EPISODE_BATCH):
        chunk = episode_ids[start : start + _EPISODE_BATCH]
        rows = store.scan(
            schemas.EPISODES, ["id", "query_embedding"], in_clause("id", chunk)
        ).to_pylist()
        vectors.update({r["id"]: np.asarray(r["query_embedding"]) for r in rows})
    index.extend(
        (row["memory_id"], vectors[row["episode_id"]], row["value"])
        for row in recent.iter_rows(named=True)
        if row["episode_id"] in vectors
    )
    index.mark_helped(events.filter(pl.col("value") > 0)["memory_id"].unique())
    index.loaded = True
