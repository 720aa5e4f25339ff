"""Pack maintenance: compaction, old-version cleanup and index building.

Every LanceDB commit leaves a version; ``optimize()`` merges small fragments, updates
indexes and deletes versions older than the retention period (time travel reaches back
that far). The vector index (IVF_PQ, cosine, matching the recall metric) is built once
``memories`` has ``index_threshold`` rows: FIELD_NOTES measured that an ANN index is
rarely worth it below about 100k rows. Scalar BTREE indexes on the id columns speed up
``merge_insert`` and lookups at the same size. A commit conflict with a live writer is a
:class:`packs.errors.TransientStorageError` (via ``storage_step``), which the flow retries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from lancedb.index import BTree, IvfPq

from packs.store import schemas
from packs.store.gateway import storage_step

if TYPE_CHECKING:
    from packs.pack import Pack

DEFAULT_INDEX_THRESHOLD = 100_000  # FIELD_NOTES: an ANN index is rarely needed below this
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


def maintain(
    pack: Pack,
    retention: timedelta | None = None,
    index_threshold: int = DEFAULT_INDEX_THRESHOLD,
) -> MaintenanceReport:
    """Compact every table, drop versions older than ``retention`` (default: the Pack's
    ``version_retention_hours``), and build the indexes that are due."""
    if retention is None:
        retention = timedelta(hours=pack.settings.version_retention_hours)
    store = pack.store
    store.require_writable("maintain the Pack")
    pack.flush()
    names = sorted(store.table_names())
    before = {name: store.fragment_count(name) for name in names}
    built = _build_indexes(pack, index_threshold)  # first, so the cleanup covers its versions
    removed: dict[str, int] = {}
    for name in names:
        table = store.table(name)
        versions = len(table.list_versions())
        with storage_step(store.location, f"optimize {name!r}"):
            table.optimize(cleanup_older_than=retention)
        removed[name] = versions - len(table.list_versions())
    after = {name: store.fragment_count(name) for name in names}
    return MaintenanceReport(before, after, removed, built)


def _build_indexes(pack: Pack, threshold: int) -> list[str]:
    store = pack.store
    built = []
    for name, column in _SCALAR_KEYS.items():
        table = store.table(name)
        if table.count_rows() < threshold:
            continue
        if not any(column in index.columns for index in table.list_indices()):
            with storage_step(store.location, f"index {name}.{column}"):
                table.create_index(column, config=BTree())
            built.append(f"{name}.{column} (btree)")
    memories = store.table(schemas.MEMORIES)
    rows = memories.count_rows()
    indexed = any("intent_embedding" in index.columns for index in memories.list_indices())
    if rows >= threshold and not indexed:
        # LanceDB's guidance: about sqrt(rows) partitions; 384-d split into 48 sub-vectors.
        config = IvfPq(
            distance_type="cosine",
            num_partitions=max(1, int(math.sqrt(rows))),
            num_sub_vectors=pack.embedding.dim // 8,
        )
        with storage_step(store.location, "index memories.intent_embedding"):
            memories.create_index("intent_embedding", config=config)
        built.append("memories.intent_embedding (ivf_pq, cosine)")
    return built
