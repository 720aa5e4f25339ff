"""Rebuilding utilities from the reward log, and comparing the two paths.

The online path stores the EMA fold of each memory's log (:mod:`packs.learning.online`);
:func:`rebuild_utilities` computes the vectorised replay (:mod:`packs.learning.replay`)
of the same log and reports where the stored values drift from it. With ``write`` it
stores the replay where they differ (a crash between the log and the utilities, a
table restored from a backup).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from packs.lazy import lazy_module
from packs.learning.replay import replay
from packs.records import RebuildReport
from packs.store import schemas
from packs.store.gateway import PackStore

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

# Stored and rebuilt values closer than this are equal (float rounding of two
# computations of one recurrence; tests/packs/learning/test_replay.py holds them to it).
DRIFT_TOLERANCE = 1e-9
_RENAMES = {
    "memory_id": "id",
    "utility": "rebuilt_utility",
    "confidence": "rebuilt_confidence",
    "reward_count": "rebuilt_count",
}


def reward_log(store: PackStore) -> pl.DataFrame:
    """The whole append-only reward log (the caller flushes first)."""
    columns = schemas.REWARD_EVENTS_SCHEMA.names
    return pl.DataFrame(store.scan(schemas.REWARD_EVENTS, list(columns)))


def rebuild_utilities(store: PackStore, events: pl.DataFrame, *, write: bool) -> RebuildReport:
    """Replay ``events``; with ``write``, store what differs in one commit.

    Memories without events go back to utility 0 and confidence 0 (MemRL's initial
    values). Afterwards the stored utilities equal the replay of the log.
    """
    rebuilt = replay(events)
    current = pl.DataFrame(
        store.scan(schemas.MEMORIES, ["id", "utility", "confidence", "reward_count"])
    )
    joined = current.join(rebuilt.rename(_RENAMES), on="id", how="left").with_columns(
        pl.col("rebuilt_utility").fill_null(0.0),
        pl.col("rebuilt_confidence").fill_null(0.0),
        pl.col("rebuilt_count").fill_null(0),
    )
    joined = joined.with_columns(
        utility_drift=(pl.col("utility") - pl.col("rebuilt_utility")).abs(),
        confidence_drift=(pl.col("confidence") - pl.col("rebuilt_confidence")).abs(),
    )
    changed = joined.filter(
        (pl.col("utility_drift") > DRIFT_TOLERANCE)
        | (pl.col("confidence_drift") > DRIFT_TOLERANCE)
        | (pl.col("reward_count") != pl.col("rebuilt_count"))
    )
    if write and changed.height:
        _store_rebuilt(store, changed)
    return RebuildReport(
        memories=joined.height,
        events=events.height,
        changed=changed.height,
        max_utility_drift=_max(joined["utility_drift"]),
        max_confidence_drift=_max(joined["confidence_drift"]),
        drift=changed.select(
            "id", "utility", "rebuilt_utility", "confidence", "rebuilt_confidence"
        ),
    )


def _store_rebuilt(store: PackStore, changed: pl.DataFrame) -> None:
    store.require_writable("rewrite utilities")
    fields = store.schema(schemas.MEMORIES)
    rows = changed.select(
        "id",
        pl.col("rebuilt_utility").alias("utility"),
        pl.col("rebuilt_confidence").alias("confidence"),
        pl.col("rebuilt_count").cast(pl.Int64).alias("reward_count"),
    ).to_arrow()
    stamp = fields.field("updated_at")
    rows = rows.append_column(stamp, pa.array([datetime.now(UTC)] * rows.num_rows, stamp.type))
    schema = pa.schema([fields.field(n) for n in rows.column_names])
    store.merge(schemas.MEMORIES, rows.cast(schema), "id", update=True, insert=False)


def _max(column: pl.Series) -> float:
    value = column.max()
    return float(value) if isinstance(value, int | float) else 0.0
