"""Rewarded episodes from a file, run for some epochs: the demo's learning phase."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evals.episodes import EpisodeOutcome, load_episodes, run_epochs, success_by_epoch
from packs.pack import Pack


@dataclass(frozen=True)
class EpisodeRun:
    outcomes: tuple[EpisodeOutcome, ...]
    success_by_epoch: dict[int, float]  # epoch -> share of episodes with a helpful item


def run_rewarded_episodes(
    pack: Pack,
    episodes_path: str | Path,
    refs: dict[str, str],
    epochs: int,
    *,
    show_progress: bool = False,
    credit: str = "item",
) -> EpisodeRun:
    """Run the episode file ``epochs`` times, rewarding each by its ground truth."""
    episodes = load_episodes(episodes_path, refs)
    outcomes = run_epochs(pack, episodes, epochs, show_progress=show_progress, credit=credit)
    return EpisodeRun(tuple(outcomes), success_by_epoch(outcomes))
