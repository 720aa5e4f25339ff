"""Tasks over a Pack: load a bundle, run rewarded episodes, snapshot a ranking."""

from __future__ import annotations

from prefect import task

from evals.rewarded_episodes import EpisodeRun, run_rewarded_episodes
from packs.bundles import BundleLoad, load_bundle
from packs.pack import Pack
from packs.ranking_snapshot import RankingSnapshot, snapshot_media, snapshot_ranking
from packs.showcase import Showcase, load_showcase
from tasks.retry import TRANSIENT


@task(name="load-bundle", **TRANSIENT.task_options())
def load_bundle_task(pack: str, root: str | None, folder: str) -> BundleLoad:
    """Add a bundle's knowledge and memories to the Pack (idempotent)."""
    with Pack.open(pack, root) as handle:
        return load_bundle(handle, folder)


@task(name="load-showcase")
def showcase_task(data_dir: str, refs: dict[str, str]) -> Showcase:
    """The bundle's showcase question and the ids of the items that help with it."""
    return load_showcase(data_dir, refs)


@task(name="rewarded-episodes")
def episodes_task(
    pack: str,
    root: str | None,
    episodes_path: str,
    refs: dict[str, str],
    epochs: int,
    show_progress: bool = False,
    credit: str = "item",
) -> EpisodeRun:
    """Run the episode file ``epochs`` times, rewarding by ground truth."""
    with Pack.open(pack, root, create=False) as handle:
        return run_rewarded_episodes(
            handle, episodes_path, refs, epochs, show_progress=show_progress, credit=credit
        )


@task(name="ranking-snapshot")
def ranking_task(
    pack: str, root: str | None, query: str, k: int, depth: int = 10
) -> RankingSnapshot:
    """The current top ``k`` for ``query`` with nothing logged, its prompt block, and the
    rank of every item in the top ``depth`` (to show how items moved)."""
    with Pack.open(pack, root, create=False) as handle:
        return snapshot_ranking(handle, query, k, depth)


@task(name="media-recall")
def media_recall_task(
    pack: str, root: str | None, query: str, media_id: str, k: int = 1
) -> RankingSnapshot:
    """The best chunks of one media item for ``query`` (ranked as recall, nothing logged)."""
    with Pack.open(pack, root) as handle:
        return snapshot_media(handle, query, media_id, k)
