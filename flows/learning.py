"""The scheduled half of Wolfie: utilities, lessons, health and maintenance.

Every flow opens an existing Pack only (a missing, empty or too-new Pack fails with a
clear message and nothing is created), and publishes Prefect artifacts for the UI.
"""

from __future__ import annotations

from prefect import flow

from flows.config import build_lesson_writer
from packs.lessons.refresh import LessonReport
from packs.maturity import Maturity
from packs.records import RebuildReport, TuningReport
from packs.store.maintenance import DEFAULT_INDEX_THRESHOLD, MaintenanceReport
from tasks.learning_tasks import (
    check_pack_task,
    maintain_task,
    pack_health_task,
    rebuild_utilities_task,
    refresh_lessons_task,
    tune_task,
    utility_extremes_task,
)
from tasks.publish_learning import (
    publish_health_task,
    publish_lessons_task,
    publish_maintenance_task,
    publish_tuning_task,
    publish_utilities_task,
)

EXTREMES = 5  # memories shown at each end of the utility ranking


@flow(name="recompute-utilities")
def recompute_utilities(pack: str = "demo", root: str | None = None) -> RebuildReport:
    """Rebuild utilities and confidences from the reward log (idempotent)."""
    check_pack_task(pack, root)
    report = rebuild_utilities_task(pack, root)
    publish_utilities_task(pack, report)
    return report


@flow(name="refresh-lessons")
def refresh_lessons_flow(
    pack: str = "demo",
    root: str | None = None,
    writer: str | None = None,
    limit: int | None = None,
) -> LessonReport:
    """Distil lessons for memories with new evidence (writer: template or openai); publish
    a summary and every lesson written."""
    check_pack_task(pack, root)
    # Built here, from WOLFIE_LLM_* settings: the API key never becomes a task parameter.
    lesson_writer = build_lesson_writer(writer)
    report = refresh_lessons_task(pack, root, lesson_writer, limit)
    publish_lessons_task(pack, report, lesson_writer.name)
    return report


@flow(name="pack-health")
def pack_health(pack: str = "demo", root: str | None = None) -> Maturity:
    """Append the maturity signals to state_traces; publish a table, a chart and the
    memories of highest and lowest utility with their lessons."""
    check_pack_task(pack, root)
    health = pack_health_task(pack, root)
    extremes = utility_extremes_task(pack, root, EXTREMES)
    publish_health_task(pack, health, extremes)
    return health.current


@flow(name="tune-pack")
def tune_pack(pack: str = "demo", root: str | None = None, dry_run: bool = False) -> TuningReport:
    """Fit the Pack's learning to its logged episodes (docs/tuning.md); publish the run."""
    check_pack_task(pack, root)
    report = tune_task(pack, root, dry_run)
    publish_tuning_task(pack, report)
    return report


@flow(name="maintain-pack")
def maintain_pack(
    pack: str = "demo",
    root: str | None = None,
    retention_days: float | None = None,
    index_threshold: int = DEFAULT_INDEX_THRESHOLD,
) -> MaintenanceReport:
    """Forget expired memories, purge what earlier forgets left in older versions,
    compact tables, drop versions older than ``retention_days`` (default: the Pack's
    ``version_retention_hours``), build the indexes that are due."""
    check_pack_task(pack, root)
    report = maintain_task(pack, root, retention_days, index_threshold)
    publish_maintenance_task(pack, report)
    return report
