"""Episodes with a known answer: recall, reward by ground truth, repeat.

This is the inner loop of the demo and of the learning benchmark: a query recalls ``k2``
items and the episode is rewarded ``reward_hit`` when at least one injected item is
relevant, else ``reward_miss`` (MemRL's success/failure rewards, +1/-1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress

from packs.bundles import read_jsonl
from packs.errors import InvalidInput
from packs.pack import Pack


@dataclass(frozen=True)
class Episode:
    query: str
    relevant: frozenset[str]  # row ids


@dataclass(frozen=True)
class EpisodeOutcome:
    epoch: int
    query: str
    injected: tuple[str, ...]
    hit: bool
    reward: float


def load_episodes(path: str | Path, refs: dict[str, str]) -> list[Episode]:
    """Read ``{"query": ..., "helpful": [ref, ...]}`` lines; refs map to row ids."""
    episodes = []
    for number, obj in read_jsonl(path):
        query = obj.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput(f"{path}:{number}: 'query' must be a non-empty string.")
        missing = [ref for ref in obj.get("helpful", []) if ref not in refs]
        if missing:
            raise InvalidInput(f"{path}:{number}: unknown item reference(s) {missing}.")
        episodes.append(Episode(query, frozenset(refs[ref] for ref in obj["helpful"])))
    return episodes


def run_episode(
    pack: Pack, episode: Episode, epoch: int, reward_hit: float = 1.0, reward_miss: float = -1.0
) -> EpisodeOutcome:
    recall = pack.recall(episode.query)
    hit = bool(set(recall.ids) & episode.relevant)
    reward = reward_hit if hit else reward_miss
    pack.feedback(recall.episode_id or "", reward)
    return EpisodeOutcome(epoch, episode.query, tuple(recall.ids), hit, reward)


def run_epochs(
    pack: Pack, episodes: Sequence[Episode], epochs: int, *, show_progress: bool = False
) -> list[EpisodeOutcome]:
    """Run every episode ``epochs`` times in order, with a rich progress bar if asked."""
    outcomes = []
    with Progress(disable=not show_progress, transient=True) as progress:
        bar = progress.add_task("episodes", total=epochs * len(episodes))
        for epoch in range(1, epochs + 1):
            for episode in episodes:
                outcomes.append(run_episode(pack, episode, epoch))
                progress.advance(bar)
    pack.flush()
    return outcomes


def success_by_epoch(outcomes: Sequence[EpisodeOutcome]) -> dict[int, float]:
    by_epoch: dict[int, list[bool]] = {}
    for outcome in outcomes:
        by_epoch.setdefault(outcome.epoch, []).append(outcome.hit)
    return {epoch: sum(hits) / len(hits) for epoch, hits in sorted(by_epoch.items())}
