"""Tasks of the scheduled learning flows: thin wrappers over ``packs`` library calls,
and the publish tasks that turn their reports into Prefect artifacts for the UI."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from evals.health_chart import health_chart_png, markdown_image
from flows.config import build_lesson_writer
from packs.errors import EmptyPack
from packs.lessons.refresh import refresh_lessons
from packs.pack import Pack
from packs.rewards.utility_report import utility_extremes
from packs.store import schemas
from packs.store.maintenance import maintain
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


@task(name="publish-lessons")
def publish_lessons_task(pack: str, report: dict[str, Any]) -> list[str]:
    """A summary of the refresh, and a table of every lesson it wrote (id, intent, text)."""
    failures = "".join(f"\n- `{m}`: {why}" for m, why in report["failures"].items())
    keys = [artifact_key(pack, "lessons")]
    create_markdown_artifact(
        key=keys[0],
        markdown=(
            f"### Lessons of `{pack}` ({report['writer']} writer)\n\n"
            f"- memories with new evidence: {report['candidates']}\n"
            f"- lessons written: {report['written']}\n"
            f"- failures (old lesson kept): {len(report['failures'])}{failures}\n"
        ),
        description="What the last lesson refresh did.",
    )
    if report["lessons"]:
        keys.append(artifact_key(pack, "lessons-written"))
        rows = [
            {"memory_id": w["memory_id"], "kind": w["kind"], "intent": clip(w["intent"], 120),
             "lesson": w["lesson"], "utility": round(w["utility"], 3)}
            for w in report["lessons"]
        ]  # fmt: skip
        create_table_artifact(
            key=keys[1], table=rows, description=f"The {len(rows)} lesson(s) the refresh wrote."
        )
    return keys


@task(name="pack-health", **RETRIES)
def pack_health_task(pack: str, root: str | None) -> dict[str, Any]:
    """Compute the maturity signals, append them to state_traces, return all traces."""
    with Pack.open(pack, root, create=False) as handle:
        current = handle.maturity(record=True)
        traces = handle.store.scan(
            schemas.STATE_TRACES, schemas.STATE_TRACES_SCHEMA.names
        ).to_pylist()
    traces.sort(key=lambda t: t["at"])
    return {"current": current.to_row(), "traces": traces}


@task(name="utility-extremes", **RETRIES)
def utility_extremes_task(pack: str, root: str | None, n: int) -> dict[str, Any]:
    """The ``n`` rewarded memories of highest and of lowest utility, with their lessons."""
    with Pack.open(pack, root, read_only=True) as handle:
        return asdict(utility_extremes(handle, n))


@task(name="publish-health")
def publish_health_task(
    pack: str, current: dict[str, Any], traces: list[dict[str, Any]], extremes: dict[str, Any]
) -> list[str]:
    """The current signals (table), the maturity chart and the best and worst memories."""
    keys = [artifact_key(pack, k) for k in ("health", "health-chart", "utility-extremes")]
    create_table_artifact(
        key=keys[0],
        table=[{"signal": k, "value": v} for k, v in current.items() if k != "at"],
        description=f"Maturity of {pack}: stage {current['stage']}.",
    )
    chart = markdown_image(health_chart_png(traces), f"maturity of {pack}")
    create_markdown_artifact(
        key=keys[1],
        markdown=f"### Maturity of `{pack}` over time (stage: {current['stage']})\n\n{chart}\n",
        description=f"{len(traces)} health run(s) of {pack}.",
    )
    create_markdown_artifact(
        key=keys[2], markdown=extremes_markdown(pack, extremes),
        description="Rewarded memories of highest and lowest utility, with their lessons.",
    )  # fmt: skip
    return keys


def extremes_markdown(pack: str, extremes: dict[str, Any]) -> str:
    if not extremes["rewarded"]:
        return f"### Memories of `{pack}` by utility\n\nNo memory has a reward yet."
    parts = [f"### Memories of `{pack}` by utility ({extremes['rewarded']} rewarded)"]
    for title, rows in (
        ("Highest utility", extremes["top"]),
        ("Lowest utility", extremes["bottom"]),
    ):
        parts += ["", f"#### {title}", "", _memory_table(rows) if rows else "(none)"]
    return "\n".join(parts) + "\n"


def _memory_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| # | utility | confidence | rewards | kind | memory | lesson |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for rank, r in enumerate(rows, start=1):
        lesson = cell(r["experience_summary"]) if r["experience_summary"] else "*(none yet)*"
        lines.append(
            f"| {rank} | {r['utility']:+.2f} | {r['confidence']:.2f} | {r['reward_count']} | "
            f"{r['kind']} | {cell(clip(r['intent_text'], 100))} `{r['id']}` | {lesson} |"
        )
    return "\n".join(lines)


def artifact_key(pack: str, what: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{pack}-{what}".lower()).strip("-")


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


@task(name="maintain-pack", **RETRIES)
def maintain_task(
    pack: str, root: str | None, retention_days: float | None, index_threshold: int
) -> dict[str, Any]:
    """Compact, clean old versions, build indexes once the Pack is large enough."""
    retention = None if retention_days is None else timedelta(days=retention_days)
    with Pack.open(pack, root, create=False) as handle:
        report = maintain(handle, retention, index_threshold)
    return asdict(report)
