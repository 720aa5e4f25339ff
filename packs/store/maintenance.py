"""Pack maintenance: compaction, old-version cleanup and index building.

Every LanceDB commit leaves a version; ``optimize()`` merges small fragments, updates
indexes and deletes versions older than the retention period (time travel reaches back
that far). The vector index (IVF_SQ, cosine, matching the recall metric) is built once
``memories`` has ``index_threshold`` rows: docs/field-notes.md measured that an ANN index is
rarely worth it below about 100k rows. Rows added after it are searched flat beside it
(LanceDB's default ``fast_search=False``) until the next ``optimize()`` folds them in, so
they are found at once (docs/recall.md). Scalar BTREE indexes on the id columns speed up
``merge_insert`` and lookups at the same size, and a LABEL_LIST index on ``memories.tags``
answers the scope and metadata filters (``array_has``, ``array_has_any``, their ``NOT``
and ``OR``) from the index instead of reading every row's tags: at 1M rows a scope's
1,000 rows are counted in about 1 ms instead of 90-360 ms (docs/recall.md). A commit
conflict with a live writer is a :class:`packs.errors.TransientStorageError` (via
:func:`packs.store.faults.storage_step`), which the flow retries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from packs.store import schemas
from packs.store.gateway import VECTOR_COLUMN, PackStore

DEFAULT_INDEX_THRESHOLD = 100_000  # docs/field-notes.md: an ANN index is rarely needed below this
# Measured (benchmarks/recall_bench.py --sections ann; the figures: docs/recall.md): with
# partitions of about 4,000 rows, LanceDB's default probes and the gateway's REFINE_FACTOR
# found every exact top-k1. Given as a target size, not a count: optimize() keeps it, where
# a num_partitions index was re-partitioned by LanceDB's own default at the next optimize().
ROWS_PER_PARTITION = 4_000
_SCALAR_KEYS = {
    schemas.MEMORIES: "id",
    schemas.EPISODES: "id",
    schemas.REWARD_EVENTS: "idempotency_key",
}


@dataclass(frozen=True)
class MaintenanceReport:
    fragments_before: dict[str, int]
    fragments_after: dict[str, int]
    versions_removed: dict[str, int]
    indexes_built: list[str] = field(default_factory=list)
    expired: int = 0  # memories forgotten because their expires_at had passed
    purged: int = 0  # earlier forgets whose older versions this run purged


def maintain_store(
    store: PackStore, retention: timedelta, index_threshold: int = DEFAULT_INDEX_THRESHOLD
) -> MaintenanceReport:
    """Compact every table, drop versions older than ``retention``, and build the indexes
    that are due. The caller flushes its handle first (:func:`packs.upkeep.maintain`)."""
    store.require_writable("maintain the Pack")
    names = sorted(store.table_names())
    before = {name: store.fragment_count(name) for name in names}
    built = _build_indexes(store, index_threshold)  # first: the cleanup covers them
    removed = {name: store.optimize(name, retention) for name in names}
    after = {name: store.fragment_count(name) for name in names}
    return MaintenanceReport(before, after, removed, built)


def btree() -> Any:
    """A scalar B-tree index (lancedb loads only when an index is built: quick_import.py)."""
    from lancedb.index import BTree

    return BTree()


def label_list() -> Any:
    """A label-list index over a list column (the memories' tags)."""
    from lancedb.index import LabelList

    return LabelList()


def ivf_sq() -> Any:
    """The ANN index of the intent vectors: IVF_SQ, cosine."""
    from lancedb.index import IvfSq

    return IvfSq(distance_type="cosine", target_partition_size=ROWS_PER_PARTITION)


def _build_indexes(store: PackStore, threshold: int) -> list[str]:
    built = []
    for name, column in _SCALAR_KEYS.items():
        if store.count(name) < threshold or column in store.indexed_columns(name):
            continue
        store.create_index(name, column, btree())
        built.append(f"{name}.{column} (btree)")
    rows = store.count(schemas.MEMORIES)
    if rows >= threshold and "tags" not in store.indexed_columns(schemas.MEMORIES):
        store.create_index(schemas.MEMORIES, "tags", label_list())
        built.append("memories.tags (label_list)")
    if rows >= threshold and VECTOR_COLUMN not in store.indexed_columns(schemas.MEMORIES):
        # IVF_SQ, not IVF_PQ: PQ built far slower and missed exact neighbours even with
        # refinement (docs/recall.md). SQ keeps a byte per dimension, a quarter of
        # IVF_FLAT, which did no better.
        store.create_index(schemas.MEMORIES, VECTOR_COLUMN, ivf_sq())
        built.append("memories.intent_embedding (ivf_sq, cosine)")
    return built
