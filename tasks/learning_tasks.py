"""Tasks of the scheduled learning flows: each wraps one ``packs`` library call.

Their artifacts are published by ``tasks/publish_learning.py``.
"""

from __future__ import annotations

from datetime import timedelta

from prefect import task
from prefect.cache_policies import NO_CACHE

from packs.health_report import HealthReport, record_health
from packs.lessons.refresh import LessonReport
from packs.lessons.writers import LessonWriter
from packs.pack import Pack
from packs.pack_status import PackStatus, require_rows
from packs.records import RebuildReport, TuningReport
from packs.store.maintenance import MaintenanceReport
from packs.utility_report import UtilityExtremes, utility_extremes
from tasks.retry import TRANSIENT


@task(name="check-pack", **TRANSIENT.task_options())
def check_pack_task(pack: str, root: str | None) -> PackStatus:
    """Open an existing Pack (never create one) and refuse an empty one."""
    with Pack.open(pack, root, create=False) as handle:
        return require_rows(handle)


@task(name="rebuild-utilities", **TRANSIENT.task_options())
def rebuild_utilities_task(pack: str, root: str | None) -> RebuildReport:
    """Replay the reward log; write what differs in one commit; report the drift."""
    with Pack.open(pack, root, create=False) as handle:
        return handle.rebuild_utilities(write=True)


# The writer holds an HTTP client (and maybe an API key): built by the flow from the
# environment, passed in, never hashed into a cache key.
@task(name="refresh-lessons", cache_policy=NO_CACHE, **TRANSIENT.task_options())
def refresh_lessons_task(
    pack: str, root: str | None, writer: LessonWriter, limit: int | None
) -> LessonReport:
    """Distil lessons for memories with new evidence; failures keep the old lesson."""
    with Pack.open(pack, root, create=False) as handle:
        return handle.lessons.refresh(writer, limit)


@task(name="pack-health", **TRANSIENT.task_options())
def pack_health_task(pack: str, root: str | None) -> HealthReport:
    """Compute the maturity signals, append them to state_traces, return all traces."""
    with Pack.open(pack, root, create=False) as handle:
        return record_health(handle)


@task(name="utility-extremes", **TRANSIENT.task_options())
def utility_extremes_task(pack: str, root: str | None, n: int) -> UtilityExtremes:
    """The ``n`` rewarded memories of highest and of lowest utility, with their lessons."""
    with Pack.open(pack, root, read_only=True) as handle:
        return utility_extremes(handle, n)


@task(name="tune-pack", **TRANSIENT.task_options())
def tune_task(pack: str, root: str | None, dry_run: bool) -> TuningReport:
    """Fit the Pack's learning to its episodes, adopted only where held-out questions of
    every scope say so (``Pack.tuning.tune``, docs/tuning.md)."""
    with Pack.open(pack, root, create=False) as handle:
        return handle.tuning.tune(dry_run=dry_run, trigger="schedule")


@task(name="maintain-pack", **TRANSIENT.task_options())
def maintain_task(
    pack: str, root: str | None, retention_days: float | None, index_threshold: int
) -> MaintenanceReport:
    """Compact, clean old versions, build indexes once the Pack is large enough."""
    retention = None if retention_days is None else timedelta(days=retention_days)
    with Pack.open(pack, root, create=False) as handle:
        return handle.upkeep.maintain(retention, index_threshold)
