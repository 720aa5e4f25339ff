"""Publish tasks of the scheduled learning flows: reports become Prefect artifacts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from evals.health_chart import health_chart_png, markdown_image
from packs.health_report import HealthReport
from packs.lessons.refresh import LessonReport
from packs.records import RebuildReport, TuningReport
from packs.store.maintenance import MaintenanceReport
from packs.utility_report import UtilityExtremes
from tasks.artifacts import artifact_key, cell, clip

DRIFT_ROWS = 50  # rows of the drift table shown


@task(name="publish-utilities")
def publish_utilities_task(pack: str, report: RebuildReport) -> list[str]:
    """The drift between online utilities and the replay, and the rows rewritten."""
    keys = [artifact_key(pack, "utilities")]
    create_markdown_artifact(
        key=keys[0],
        markdown=(
            f"### Utilities of `{pack}` rebuilt from {report.events:,} reward events\n\n"
            f"- memories: {report.memories:,}; rewritten: {report.changed:,}\n"
            f"- largest drift online vs rebuilt: utility {report.max_utility_drift:.2e}, "
            f"confidence {report.max_confidence_drift:.2e}\n"
        ),
        description="Drift between the online utilities and the replay of the reward log.",
    )
    if report.drift.height:
        keys.append(artifact_key(pack, "utility-drift"))
        create_table_artifact(
            key=keys[1],
            table=report.drift.head(DRIFT_ROWS).to_dicts(),
            description=f"Rows rewritten by the recompute (up to {DRIFT_ROWS}).",
        )
    return keys


@task(name="publish-lessons")
def publish_lessons_task(pack: str, report: LessonReport, writer: str) -> list[str]:
    """A summary of the refresh, and a table of every lesson it wrote (id, intent, text)."""
    failures = "".join(f"\n- `{m}`: {why}" for m, why in report.failures.items())
    keys = [artifact_key(pack, "lessons")]
    create_markdown_artifact(
        key=keys[0],
        markdown=(
            f"### Lessons of `{pack}` ({writer} writer)\n\n"
            f"- memories with new evidence: {report.candidates}\n"
            f"- lessons written: {report.written}\n"
            f"- failures (old lesson kept): {len(report.failures)}{failures}\n"
        ),
        description="What the last lesson refresh did.",
    )
    if report.lessons:
        keys.append(artifact_key(pack, "lessons-written"))
        rows = [
            {
                "memory_id": w.memory_id,
                "kind": w.kind,
                "intent": clip(w.intent, 120),
                "lesson": w.lesson,
                "track record (Q)": round(w.utility, 3),
            }
            for w in report.lessons
        ]
        create_table_artifact(
            key=keys[1], table=rows, description=f"The {len(rows)} lesson(s) the refresh wrote."
        )
    return keys


@task(name="publish-health")
def publish_health_task(pack: str, health: HealthReport, extremes: UtilityExtremes) -> list[str]:
    """The current signals (table), the maturity chart and the best and worst memories."""
    keys = [artifact_key(pack, k) for k in ("health", "health-chart", "utility-extremes")]
    current = health.current.to_row()
    create_table_artifact(
        key=keys[0],
        table=[{"signal": k, "value": v} for k, v in current.items() if k != "at"],
        description=f"Maturity of {pack}: stage {current['stage']}.",
    )
    chart = markdown_image(
        health_chart_png([t.to_row() for t in health.traces]), f"maturity of {pack}"
    )
    create_markdown_artifact(
        key=keys[1],
        markdown=f"### Maturity of `{pack}` over time (stage: {current['stage']})\n\n{chart}\n",
        description=f"{len(health.traces)} health run(s) of {pack}.",
    )
    create_markdown_artifact(
        key=keys[2],
        markdown=extremes_markdown(pack, extremes),
        description="Rewarded memories of highest and lowest utility, with their lessons.",
    )
    return keys


@task(name="publish-maintenance")
def publish_maintenance_task(pack: str, report: MaintenanceReport) -> str:
    """A table of fragments before and after compaction and versions removed, per table."""
    key = artifact_key(pack, "maintenance")
    create_table_artifact(
        key=key,
        table=[
            {
                "table": name,
                "fragments_before": before,
                "fragments_after": report.fragments_after[name],
                "versions_removed": report.versions_removed[name],
            }
            for name, before in report.fragments_before.items()
        ],
        description="Indexes built: "
        + (", ".join(report.indexes_built) or "none")
        + f". Expired memories forgotten: {report.expired}; forgets purged: {report.purged}.",
    )
    return key


@task(name="publish-tuning")
def publish_tuning_task(pack: str, report: TuningReport) -> str:
    """The run's verdict and each proposal's held-out comparison, per scope."""
    key = artifact_key(pack, "tuning")
    rows = [
        {
            "decision": name,
            "changes": cell(compared.get("changes")),
            "held-out questions": compared.get("questions"),
            "difference": compared.get("difference"),
            "95% low": compared.get("low"),
            "scopes": cell(compared.get("scopes")),
            "refused by": compared.get("refused_by"),
        }
        for name, compared in (report.comparison or {}).items()
    ] or [{"decision": "none", "changes": "-", "reason": report.reason}]
    verdict = "adopted" if report.adopted else "kept the settings in force"
    create_table_artifact(
        key=key, table=rows, description=f"Tuning run {report.id}: {verdict}. {report.reason}"
    )
    return key


def extremes_markdown(pack: str, extremes: UtilityExtremes) -> str:
    if not extremes.rewarded:
        return f"### Memories of `{pack}` by track record\n\nNo memory has a reward yet."
    parts = [
        f"### Memories of `{pack}` by track record (global Q; {extremes.rewarded} rewarded)",
        "Q is a memory's EMA utility over every reward it got. Recall ranks by U(m|q), its "
        "utility for questions like the one asked, which Q only seeds.",
    ]
    for title, rows in (("Highest Q", extremes.top), ("Lowest Q", extremes.bottom)):
        parts += ["", f"#### {title}", "", _memory_table(rows) if rows else "(none)"]
    return "\n".join(parts) + "\n"


def _memory_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| # | Q (track record) | confidence | rewards | kind | memory | lesson |",
        "|---|---|---|---|---|---|---|",
    ]
    for rank, r in enumerate(rows, start=1):
        lesson = cell(r["experience_summary"]) if r["experience_summary"] else "*(none yet)*"
        lines.append(
            f"| {rank} | {r['utility']:+.2f} | {r['confidence']:.2f} | {r['reward_count']} | "
            f"{r['kind']} | {cell(clip(r['intent_text'], 100))} `{r['id']}` | {lesson} |"
        )
    return "\n".join(lines)
