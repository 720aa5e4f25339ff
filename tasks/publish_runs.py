"""Publish tasks of the demo and ingest flows: their results become Prefect artifacts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefect import task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
)

from packs.ranking_snapshot import RankingSnapshot
from packs.records import RecalledItem
from packs.store.rows import stable_hash
from tasks.artifacts import cell

DEMO_RATES_KEY = "demo-success-by-epoch"
DEMO_RANKING_KEY = "demo-ranking-change"
MEDIA_SUMMARY_KEY = "ingest-summary"
DOCUMENTS_KEY = "ingest-documents-summary"


@task(name="publish-demo")
def publish_demo_task(
    before: RankingSnapshot,
    after: RankingSnapshot,
    helpful: Sequence[str],
    success_by_epoch: Mapping[int, float],
) -> list[str]:
    """The success rate per epoch, and the top items before and after learning."""
    create_table_artifact(
        key=DEMO_RATES_KEY,
        table=[{"epoch": e, "success_rate": round(r, 3)} for e, r in success_by_epoch.items()],
        description="Share of episodes whose injected items included a helpful one.",
    )
    create_markdown_artifact(
        key=DEMO_RANKING_KEY,
        markdown=ranking_markdown(before, after, helpful),
        description="Top items for the showcase query before and after learning.",
    )
    return [DEMO_RATES_KEY, DEMO_RANKING_KEY]


def ranking_markdown(
    before: RankingSnapshot, after: RankingSnapshot, helpful: Sequence[str]
) -> str:
    def shown(item: RecalledItem) -> str:
        mark = "helps" if item.id in helpful else "does not help"
        return cell(f"{item.text[:60]} ({mark})")

    lines = [f"Query: *{before.query}*", "", "| rank | before | after |", "|---|---|---|"]
    for rank, (b, a) in enumerate(zip(before.items, after.items, strict=False), start=1):
        lines.append(f"| {rank} | {shown(b)} | {shown(a)} |")
    return "\n".join(lines)


@task(name="progress-artifact")
def progress_artifact_task(source: str) -> str:
    """A progress bar for one media item, at 0 %; its steps move it (returns its id)."""
    key = f"ingest-{stable_hash(source)[:16]}"
    return str(create_progress_artifact(0.0, key=key, description=f"Ingesting {source}"))


@task(name="publish-media-ingest")
def publish_media_ingest_task(
    pack: str, rows: Sequence[Mapping[str, Any]], totals: Mapping[str, Any]
) -> str:
    """The run's summary table: one row per media item."""
    create_table_artifact(
        key=MEDIA_SUMMARY_KEY,
        table=[dict(row) for row in rows],
        description=(
            f"Ingested {totals['items'] - totals['failed']} of {totals['items']} items "
            f"into Pack {pack!r}: {totals['audio_s']} s of audio, {totals['chunks']} chunks, "
            f"{totals['wall_s']} s wall time."
        ),
    )
    return MEDIA_SUMMARY_KEY


@task(name="publish-documents-ingest")
def publish_documents_task(
    pack: str, rows: Sequence[Mapping[str, Any]], chunks: int, written: int
) -> str:
    """The run's summary table: one row per document, with its chunks or its error."""
    failed = sum(1 for row in rows if row["error"])
    create_table_artifact(
        key=DOCUMENTS_KEY,
        table=[dict(row) for row in rows],
        description=f"{len(rows) - failed} of {len(rows)} documents, {chunks} chunks "
        f"({written} written) into Pack {pack!r}.",
    )
    return DOCUMENTS_KEY
