"""Tasks over a Pack: load a bundle, run rewarded episodes, snapshot a ranking."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from prefect import task

from evals.episodes import load_episodes, run_epochs, success_by_epoch
from packs.bundles import load_bundle
from packs.pack import Pack
from packs.recall.prompt import render_prompt
from tasks.retry import retry_transient


@task(name="load-bundle", retries=2, retry_delay_seconds=2, retry_condition_fn=retry_transient)
def load_bundle_task(pack: str, root: str | None, folder: str) -> dict[str, Any]:
    """Add a bundle's knowledge and memories to the Pack (idempotent)."""
    with Pack.open(pack, root) as handle:
        return asdict(load_bundle(handle, folder))


@task(name="rewarded-episodes")
def episodes_task(
    pack: str,
    root: str | None,
    episodes_path: str,
    refs: dict[str, str],
    epochs: int,
    show_progress: bool = False,
    credit: str = "item",
) -> dict[str, Any]:
    """Run the episode file ``epochs`` times, rewarding by ground truth."""
    with Pack.open(pack, root, create=False) as handle:
        episodes = load_episodes(episodes_path, refs)
        outcomes = run_epochs(handle, episodes, epochs, show_progress=show_progress, credit=credit)
    return {
        "outcomes": [asdict(o) for o in outcomes],
        "success_by_epoch": success_by_epoch(outcomes),
    }


@task(name="ranking-snapshot")
def ranking_task(
    pack: str, root: str | None, query: str, k: int, depth: int = 10
) -> dict[str, Any]:
    """The current top ``k`` for ``query`` with nothing logged, its prompt block, and the
    rank of every item in the top ``depth`` (to show how items moved)."""
    with Pack.open(pack, root, create=False) as handle:
        result = handle.search(query, max(k, depth))
    top = result.items[:k]
    return {
        "query": query,
        "items": [asdict(i) for i in top],
        "prompt": render_prompt(top),
        "positions": {item.id: rank for rank, item in enumerate(result.items, start=1)},
    }
