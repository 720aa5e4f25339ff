"""The main job on the embedded default: a trading-journal Pack that learns.

Builds a Pack from ``data/demo``, shows what a recall injects for the showcase question
(``showcase.json``: a question the episodes teach about, worded differently from all of
them, with the items that actually help), runs rewarded episodes and shows how the
ranking moved: the items similarity alone put on top do not help, and learning replaces
them with ones that do. Runs on a local LanceDB folder and Prefect's ephemeral engine
(no separate server).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.ingest import ingest_media_flow
from packs.errors import InvalidInput
from tasks.ingest_tasks import media_recall_task
from tasks.pack_tasks import episodes_task, load_bundle_task, ranking_task

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"
SHOWCASE_FILE = "showcase.json"
SHOWN = 3  # items in the before/after tables (the Pack's default k2)
# A 31 s voice note (data/media/README.md has its text); short chunks so that the
# recalled one pins the phrase down to about ten seconds.
DEMO_MEDIA = Path(__file__).resolve().parents[1] / "data" / "media" / "trading_desk_note.mp3"
SPOKEN_QUERY = "What should I do after two losing trades in a row?"
MEDIA_CHUNKING = {"target_s": 12.0, "overlap_s": 0.0}


def load_showcase(data_dir: str | Path, refs: dict[str, str]) -> tuple[str, list[str]]:
    """The showcase question and the ids of the items that help with it."""
    path = Path(data_dir) / SHOWCASE_FILE
    with open(path, encoding="utf-8") as handle:
        showcase = json.load(handle)
    query, helpful = showcase.get("query"), showcase.get("helpful")
    if not isinstance(query, str) or not query.strip() or not isinstance(helpful, list):
        raise InvalidInput(f"{path}: expected {{'query': str, 'helpful': [ref, ...]}}.")
    missing = [ref for ref in helpful if ref not in refs]
    if missing:
        raise InvalidInput(f"{path}: unknown item reference(s) {missing}.")
    return query, [refs[ref] for ref in helpful]


def ranking_moves(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Where each item in ``after``'s top was ranked in ``before``: "was #5", "same",
    or "new" when it was not in the top 10."""
    moves = []
    for rank, item in enumerate(after["items"], start=1):
        was = before["positions"].get(item["id"])
        moves.append("new" if was is None else "same" if was == rank else f"was #{was}")
    return moves


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
    query, helpful = load_showcase(data_dir, loaded["refs"])
    before = ranking_task(pack, root, query, SHOWN)
    learned = episodes_task(
        pack, root, str(Path(data_dir) / "episodes.jsonl"), loaded["refs"], epochs, show_progress
    )
    after = ranking_task(pack, root, query, SHOWN)
    rates = learned["success_by_epoch"]
    create_table_artifact(
        key="demo-success-by-epoch",
        table=[{"epoch": e, "success_rate": round(r, 3)} for e, r in rates.items()],
        description="Share of episodes whose injected items included a helpful one.",
    )
    create_markdown_artifact(
        key="demo-ranking-change",
        markdown=_ranking_markdown(before, after, helpful),
        description="Top items for the showcase query before and after learning.",
    )
    spoken = None
    if media:
        ingested = ingest_media_flow(sources=[media], pack=pack, root=root, chunking=MEDIA_CHUNKING)
        item = ingested["items"][0]
        spoken = media_recall_task(pack, root, SPOKEN_QUERY, item["media_id"]) | {"ingest": item}
    return {
        "loaded": loaded, "before": before, "after": after, "success_by_epoch": rates,
        "helpful": helpful, "moves": ranking_moves(before, after), "spoken": spoken,
    }  # fmt: skip


def _ranking_markdown(before: dict[str, Any], after: dict[str, Any], helpful: list[str]) -> str:
    def cell(item: dict[str, Any]) -> str:
        mark = "helps" if item["id"] in helpful else "does not help"
        return f"{item['text'][:60]} ({mark})".replace("|", "\\|")

    lines = [f"Query: *{before['query']}*", "", "| rank | before | after |", "|---|---|---|"]
    for rank, (b, a) in enumerate(zip(before["items"], after["items"], strict=False), start=1):
        lines.append(f"| {rank} | {cell(b)} | {cell(a)} |")
    return "\n".join(lines)
