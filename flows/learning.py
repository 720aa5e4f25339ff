"""The scheduled half of Wolfie: utilities, lessons, health and maintenance.

Every flow opens an existing Pack only (a missing, empty or too-new Pack fails with a
clear message and nothing is created), and publishes Prefect artifacts for the UI.
"""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from tasks.learning_tasks import (
    artifact_key,
    check_pack_task,
    maintain_task,
    pack_health_task,
    publish_health_task,
    publish_lessons_task,
    rebuild_utilities_task,
    refresh_lessons_task,
    utility_extremes_task,
)

EXTREMES = 5  # memories shown at each end of the utility ranking


@flow(name="recompute-utilities")
def recompute_utilities(pack: str = "demo", root: str | None = None) -> dict[str, Any]:
    """Rebuild utilities and confidences from the reward log (idempotent)."""
    check_pack_task(pack, root)
    report = rebuild_utilities_task(pack, root)
    create_markdown_artifact(
        key=artifact_key(pack, "utilities"),
        markdown=(
            f"### Utilities of `{pack}` rebuilt from {report['events']:,} reward events\n\n"
            f"- memories: {report['memories']:,}; rewritten: {report['changed']:,}\n"
            f"- largest drift online vs rebuilt: utility {report['max_utility_drift']:.2e}, "
            f"confidence {report['max_confidence_drift']:.2e}\n"
        ),
        description="Drift between the online utilities and the replay of the reward log.",
    )
    if report["drift"]:
        create_table_artifact(
            key=artifact_key(pack, "utility-drift"),
            table=report["drift"],
            description="Rows rewritten by the recompute (up to 50).",
        )
    return report


@flow(name="refresh-lessons")
def refresh_lessons_flow(
    pack: str = "demo", root: str | None = None, writer: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Distil lessons for memories with new evidence (writer: template or openai); publish
    a summary and every lesson written."""
    check_pack_task(pack, root)
    report = refresh_lessons_task(pack, root, writer, limit)
    publish_lessons_task(pack, report)
    return report


@flow(name="pack-health")
def pack_health(pack: str = "demo", root: str | None = None) -> dict[str, Any]:
    """Append the maturity signals to state_traces; publish a table, a chart and the
    memories of highest and lowest utility with their lessons."""
    check_pack_task(pack, root)
    health = pack_health_task(pack, root)
    extremes = utility_extremes_task(pack, root, EXTREMES)
    publish_health_task(pack, health["current"], health["traces"], extremes)
    return health["current"]


@flow(name="maintain-pack")
def maintain_pack(
    pack: str = "demo", root: str | None = None, retention_days: float | None = None,
    index_threshold: int = 100_000,
) -> dict[str, Any]:  # fmt: skip
    """Compact tables, drop versions older than ``retention_days`` (default: the Pack's
    ``version_retention_hours``), build the indexes that are due."""
    check_pack_task(pack, root)
    report = maintain_task(pack, root, retention_days, index_threshold)
    create_table_artifact(
        key=artifact_key(pack, "maintenance"),
        table=[
            {
                "table": name,
                "fragments_before": before,
                "fragments_after": report["fragments_after"][name],
                "versions_removed": report["versions_removed"][name],
            }
            for name, before in report["fragments_before"].items()
        ],
        description="Indexes built: " + (", ".join(report["indexes_built"]) or "none"),
    )
    return report
