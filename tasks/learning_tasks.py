"""Tasks of the scheduled learning flows: thin wrappers over ``packs`` library calls."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import Any

from prefect import task

from evals.health_chart import health_chart_png, markdown_image
from flows.config import build_lesson_writer
from packs import schemas
from packs.errors import EmptyPack
from packs.lesson_refresh import refresh_lessons
from packs.maintenance import maintain
from packs.pack import Pack
from tasks.retry import retry_transient

RETRIES: dict[str, Any] = {
    "retries": 3,
    "retry_delay_seconds": [2, 10, 30],
    "retry_condition_fn": retry_transient,
}


@task(name="check-pack", **RETRIES)
def check_pack_task(pack: str, root: str | None) -> dict[str, Any]:
    """Open an existing Pack (never create one) and refuse an empty one."""
    with Pack.open(pack, root, create=False) as handle:
        rows = handle.count()
        if rows == 0:
            raise EmptyPack(
                f"Pack {pack!r} under {handle.root!r} has no memories or knowledge yet; "
                "remember, ingest or load a bundle first."
            )
        return {"pack": pack, "root": handle.root, "rows": rows,
                "settings_version": handle.settings_version}  # fmt: skip


@task(name="rebuild-utilities", **RETRIES)
def rebuild_utilities_task(pack: str, root: str | None) -> dict[str, Any]:
    """Replay the reward log; write what differs in one commit; report the drift."""
    with Pack.open(pack, root, create=False) as handle:
        report = handle.rebuild_utilities(write=True)
    return {
        "memories": report.memories,
        "events": report.events,
        "changed": report.changed,
        "max_utility_drift": report.max_utility_drift,
        "max_confidence_drift": report.max_confidence_drift,
        "drift": report.drift.head(50).to_dicts(),
    }


@task(name="refresh-lessons", **RETRIES)
def refresh_lessons_task(
    pack: str, root: str | None, writer: str | None, limit: int | None
) -> dict[str, Any]:
    """Distil lessons for memories with new evidence; failures keep the old lesson."""
    lesson_writer = build_lesson_writer(writer)
    with Pack.open(pack, root, create=False) as handle:
        report = refresh_lessons(handle, lesson_writer, limit)
    return {**asdict(report), "writer": lesson_writer.name}


@task(name="pack-health", **RETRIES)
def pack_health_task(pack: str, root: str | None) -> dict[str, Any]:
    """Compute the maturity signals, append them to state_traces, return all traces."""
    with Pack.open(pack, root, create=False) as handle:
        current = handle.maturity(record=True)
        traces = handle.store.table(schemas.STATE_TRACES).to_arrow().to_pylist()
    traces.sort(key=lambda t: t["at"])
    return {"current": current.to_row(), "traces": traces}


@task(name="health-chart")
def health_chart_task(traces: list[dict[str, Any]], pack: str) -> str:
    """Markdown with the maturity chart embedded as a PNG image."""
    return markdown_image(health_chart_png(traces), f"maturity of {pack}")


@task(name="maintain-pack", **RETRIES)
def maintain_task(
    pack: str, root: str | None, retention_days: float | None, index_threshold: int
) -> dict[str, Any]:
    """Compact, clean old versions, build indexes once the Pack is large enough."""
    retention = None if retention_days is None else timedelta(days=retention_days)
    with Pack.open(pack, root, create=False) as handle:
        report = maintain(handle, retention, index_threshold)
    return asdict(report)
