"""The main job on the embedded default: a trading-journal Pack that learns.

Builds a Pack from the demo bundle (``packs/data/demo``, shipped inside the package), shows
what a recall injects for the showcase question (``showcase.json``: a question the
episodes teach about, worded differently from all of them, with the items that actually
help), runs rewarded episodes and shows how the
ranking moved: the items similarity alone put on top do not help, and learning replaces
them with ones that do. Runs on a local LanceDB folder and Prefect's ephemeral engine
(no separate server).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect import flow

from flows.ingest import ingest_media_flow
from packs.bundles import BundleLoad
from packs.data import bundled
from packs.ranking_snapshot import RankingSnapshot, ranking_moves
from tasks.pack_tasks import (
    episodes_task,
    load_bundle_task,
    media_recall_task,
    ranking_task,
    showcase_task,
)
from tasks.publish_runs import publish_demo_task

DEMO_DIR = bundled("demo")  # package data: packs/data/demo
SHOWN = 3  # items in the before/after tables (the Pack's default k2)
# A 31 s voice note (packs/data/media/README.md has its text); short chunks so that the
# recalled one pins the phrase down to about ten seconds.
DEMO_MEDIA = bundled("media", "trading_desk_note.mp3")
SPOKEN_QUERY = "What should I do after two losing trades in a row?"
MEDIA_CHUNKING = {"target_s": 12.0, "overlap_s": 0.0}


@dataclass(frozen=True)
class SpokenRecall:
    """The voice note: its ingest summary row and what a spoken phrase recalls."""

    ingest: dict[str, object]  # the media item's row of the ingest summary
    recall: RankingSnapshot


@dataclass(frozen=True)
class DemoRun:
    """What ``wolfie-demo`` returns; ``moves`` says where each top item was before."""

    loaded: BundleLoad
    before: RankingSnapshot
    after: RankingSnapshot
    success_by_epoch: dict[int, float]
    helpful: tuple[str, ...]  # ids of the items that help with the showcase query
    spoken: SpokenRecall | None

    @property
    def moves(self) -> list[str]:
        return ranking_moves(self.before, self.after)


@flow(name="wolfie-demo", log_prints=True)
def demo_flow(
    pack: str = "demo",
    root: str | None = None,
    epochs: int = 3,
    data_dir: str = str(DEMO_DIR),
    show_progress: bool = False,
    media: str | None = str(DEMO_MEDIA),
) -> DemoRun:
    """Load the demo bundle, rank, learn from rewarded episodes, rank again; then ingest
    the bundled voice note and recall a phrase spoken in it."""
    loaded = load_bundle_task(pack, root, data_dir)
    showcase = showcase_task(data_dir, loaded.refs)
    before = ranking_task(pack, root, showcase.query, SHOWN)
    learned = episodes_task(
        pack, root, str(Path(data_dir) / "episodes.jsonl"), loaded.refs, epochs, show_progress
    )
    after = ranking_task(pack, root, showcase.query, SHOWN)
    publish_demo_task(before, after, showcase.helpful, learned.success_by_epoch)
    spoken = None
    if media:
        ingested = ingest_media_flow(sources=[media], pack=pack, root=root, chunking=MEDIA_CHUNKING)
        item = ingested.items[0]
        spoken = SpokenRecall(item, media_recall_task(pack, root, SPOKEN_QUERY, item["media_id"]))
    return DemoRun(loaded, before, after, learned.success_by_epoch, showcase.helpful, spoken)
