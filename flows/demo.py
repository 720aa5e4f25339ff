"""The main job on the embedded default: a trading-journal Pack that learns.

Builds a Pack from ``data/demo``, shows what a recall injects, runs rewarded episodes and
shows how the ranking changed. Runs on a local LanceDB folder and Prefect's ephemeral
engine (no separate server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.ingest import ingest_media_flow
from tasks.ingest_tasks import media_recall_task
from tasks.pack_tasks import episodes_task, load_bundle_task, ranking_task

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"
SHOWCASE_QUERY = "I missed the move this morning, should I jump in now?"
# A 31 s voice note (data/media/README.md has its text); short chunks so that the
# recalled one pins the phrase down to about ten seconds.
DEMO_MEDIA = Path(__file__).resolve().parents[1] / "data" / "media" / "trading_desk_note.mp3"
SPOKEN_QUERY = "What should I do after two losing trades in a row?"
MEDIA_CHUNKING = {"target_s": 12.0, "overlap_s": 0.0}


@flow(name="wolfie-demo", log_prints=True)
def demo_flow(
    pack: str = "demo",
    root: str | None = None,
    epochs: int = 3,
    data_dir: str = str(DEMO_DIR),
    show_progress: bool = False,
    media: str | None = str(DEMO_MEDIA),
) -> dict[str, Any]:
    """Load the demo bundle, rank, learn from rewarded episodes, rank again; then ingest
    the bundled voice note and recall a phrase spoken in it."""
    loaded = load_bundle_task(pack, root, data_dir)
    before = ranking_task(pack, root, SHOWCASE_QUERY, 3)
    learned = episodes_task(
        pack, root, str(Path(data_dir) / "episodes.jsonl"), loaded["refs"], epochs, show_progress
    )
    after = ranking_task(pack, root, SHOWCASE_QUERY, 3)
    rates = learned["success_by_epoch"]
    create_table_artifact(
        key="demo-success-by-epoch",
        table=[{"epoch": e, "success_rate": round(r, 3)} for e, r in rates.items()],
        description="Share of episodes whose injected items included a helpful one.",
    )
    create_markdown_artifact(
        key="demo-ranking-change",
        markdown=_ranking_markdown(before, after),
        description="Top items for the showcase query before and after learning.",
    )
    spoken = None
    if media:
        ingested = ingest_media_flow(sources=[media], pack=pack, root=root, chunking=MEDIA_CHUNKING)
        item = ingested["items"][0]
        spoken = media_recall_task(pack, root, SPOKEN_QUERY, item["media_id"]) | {"ingest": item}
    return {
        "loaded": loaded, "before": before, "after": after, "success_by_epoch": rates,
        "spoken": spoken,
    }  # fmt: skip


def _ranking_markdown(before: dict[str, Any], after: dict[str, Any]) -> str:
    lines = [f"Query: *{before['query']}*", "", "| rank | before | after |", "|---|---|---|"]
    for rank, (b, a) in enumerate(zip(before["items"], after["items"], strict=False), start=1):
        lines.append(f"| {rank} | {b['text'][:60]} | {a['text'][:60]} |")
    return "\n".join(lines)
