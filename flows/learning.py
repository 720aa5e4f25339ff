"""The scheduled half of Wolfie: utilities, lessons, health and maintenance.

Every flow opens an existing Pack only (a missing, empty or too-new Pack fails with a
clear message and nothing is created), and publishes Prefect artifacts for the UI.
"""

from __future__ import annotations

import re
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from tasks.learning_tasks import (
    check_pack_task,
    health_chart_task,
    maintain_task,
    pack_health_task,
    rebuild_utilities_task,
    refresh_lessons_task,
)


def artifact_key(pack: str, what: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{pack}-{what}".lower()).strip("-")


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
    """Distil lessons for memories with new evidence (writer: template or openai)."""
    check_pack_task(pack, root)
    report = refresh_lessons_task(pack, root, writer, limit)
    failures = "".join(f"\n- `{m}`: {why}" for m, why in report["failures"].items())
    create_markdown_artifact(
        key=artifact_key(pack, "lessons"),
        markdown=(
            f"### Lessons of `{pack}` ({report['writer']} writer)\n\n"
            f"- memories with new evidence: {report['candidates']}\n"
            f"- lessons written: {report['written']}\n"
            f"- failures (old lesson kept): {len(report['failures'])}{failures}\n"
        ),
    )
    return report


@flow(name="pack-health")
def pack_health(pack: str = "demo", root: str | None = None) -> dict[str, Any]:
    """Append the maturity signals to state_traces; publish a table and a chart."""
    check_pack_task(pack, root)
    health = pack_health_task(pack, root)
    current = health["current"]
    create_table_artifact(
        key=artifact_key(pack, "health"),
        table=[{"signal": k, "value": v} for k, v in current.items() if k != "at"],
        description=f"Maturity of {pack}: stage {current['stage']}.",
    )
    chart = health_chart_task(health["traces"], pack)
    create_markdown_artifact(
        key=artifact_key(pack, "health-chart"),
        markdown=f"### Maturity of `{pack}` over time (stage: {current['stage']})\n\n{chart}\n",
    )
    return current


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
