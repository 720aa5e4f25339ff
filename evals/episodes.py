"""Episodes with a known answer: recall, reward by ground truth, repeat.

This is the inner loop of the demo: a query recalls ``k2`` items and the episode is a
success when at least one injected item is relevant (MemRL's success/failure).

Credit (``credit=``):

- ``"item"`` (default): the simulated user says which injected items helped. Those get
  the implicit signal ``acted_on`` (+1), the others ``ignored`` (-0.3, the Pack's
  vocabulary); a failed episode is rated -1 for everything it injected.
- ``"episode"``: MemRL's episode-level reward, +1 or -1 to every injected item.

Why item credit for the demo: with episode credit, an item that rides along with a
helpful one in a successful episode is rewarded +1 too, so once a helpful item is in the
top k2 the misleading neighbours above it are never demoted (measured on the demo bundle:
the misleading top item keeps its place, utility +0.47, after 3 epochs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress

from packs.bundles import read_jsonl
from packs.errors import InvalidInput
from packs.pack import Pack

CREDITS = ("item", "episode")
USED_SIGNAL = "acted_on"
UNUSED_SIGNAL = "ignored"


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
    reward: float  # +1 when a relevant item was injected, else -1 (the episode's outcome)


def load_episodes(path: str | Path, refs: dict[str, str]) -> list[Episode]:
    """Read ``{"query": ..., "helpful": [ref, ...]}`` lines; refs map to row ids."""
    episodes = []
    for number, obj in read_jsonl(path):
        query = obj.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput(f"{path}:{number}: 'query' must be a non-empty string.")
        helpful = obj.get("helpful", [])
        if not isinstance(helpful, list):
            raise InvalidInput(f"{path}:{number}: 'helpful' must be a list of references.")
        missing = [ref for ref in helpful if ref not in refs]
        if missing:
            raise InvalidInput(f"{path}:{number}: unknown item reference(s) {missing}.")
        episodes.append(Episode(query, frozenset(refs[ref] for ref in helpful)))
    return episodes


def run_episode(
    pack: Pack,
    episode: Episode,
    epoch: int,
    reward_hit: float = 1.0,
    reward_miss: float = -1.0,
    *,
    credit: str = "item",
) -> EpisodeOutcome:
    """Recall ``episode.query``, then reward what was injected (see the module docstring)."""
    if credit not in CREDITS:
        raise InvalidInput(f"credit must be one of {CREDITS}, not {credit!r}.")
    recall = pack.recall(episode.query)
    episode_id = recall.episode_id or ""
    used = [i for i in recall.ids if i in episode.relevant]
    hit = bool(used)
    if credit == "item" and hit:
        pack.signal(episode_id, USED_SIGNAL, used)
        unused = [i for i in recall.ids if i not in episode.relevant]
        if unused:
            pack.signal(episode_id, UNUSED_SIGNAL, unused)
    else:
        pack.feedback(episode_id, reward_hit if hit else reward_miss)
    return EpisodeOutcome(
        epoch, episode.query, tuple(recall.ids), hit, reward_hit if hit else reward_miss
    )


def run_epochs(
    pack: Pack,
    episodes: Sequence[Episode],
    epochs: int,
    *,
    show_progress: bool = False,
    credit: str = "item",
) -> list[EpisodeOutcome]:
    """Run every episode ``epochs`` times in order, with a rich progress bar if asked."""
    outcomes = []
    with Progress(disable=not show_progress, transient=True) as progress:
        bar = progress.add_task("episodes", total=epochs * len(episodes))
        for epoch in range(1, epochs + 1):
            for episode in episodes:
                outcomes.append(run_episode(pack, episode, epoch, credit=credit))
                progress.advance(bar)
    pack.flush()
    return outcomes


def success_by_epoch(outcomes: Sequence[EpisodeOutcome]) -> dict[int, float]:
    by_epoch: dict[int, list[bool]] = {}
    for outcome in outcomes:
        by_epoch.setdefault(outcome.epoch, []).append(outcome.hit)
    return {epoch: sum(hits) / len(hits) for epoch, hits in sorted(by_epoch.items())}
