"""The runtime-learning episodes: ranking methods, rewarded epochs, success rates.

A :class:`Method` is a ranking method under test: the Pack settings it runs with and how
an episode's reward is credited. Every method plays the same training queries in the
same order on its own copy of the same Pack, MemRL-style (arXiv 2601.03192, Section 5):

- a query recalls ``k2`` items; the episode succeeds when an injected item is relevant;
- the reward is ``reward_hit`` (+1) on success and ``reward_miss`` (-1) otherwise;
- with ``credit="episode"`` every injected item gets the episode's reward (MemRL);
  with ``credit="item"`` each injected item is rewarded by its own relevance; with
  ``credit="none"`` nothing is rewarded (the same Pack without feedback);
- after each epoch the held-out queries are ranked with ``search``, which logs and
  learns nothing, so held-out success measures transfer only (MemRL Table 2).

A new method is a new :class:`Method` with the settings that switch it on (``contextual``
is issue 8's query-conditioned utility); nothing else here changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from packs.pack import Pack

CREDITS = ("episode", "item", "none")


@dataclass(frozen=True)
class Method:
    """A ranking method: Pack settings (over the benchmark's shared ones) and credit."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    credit: str = "episode"
    description: str = ""

    def __post_init__(self) -> None:
        if self.credit not in CREDITS:
            raise ValueError(f"credit must be one of {CREDITS}, got {self.credit!r}.")
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))


# λ=0 with no confidence term and no exploration bonus: the ranking is cosine similarity
# alone, whatever the rewards (the RAG baseline of MemRL Table 1).
SIMILARITY = Method(
    "similarity",
    {"lam": 0.0, "w_confidence": 0.0, "explore_bonus": 0.0},
    description="similarity only (RAG baseline): λ=0, no confidence, no exploration",
)
UTILITY = Method(
    "utility",
    {"utility_mode": "global"},
    description="Wolfie utility-ranked retrieval with one global Q per item (plain MemRL)",
)

CONTEXTUAL = Method(
    "contextual",
    {"utility_mode": "contextual"},
    description="query-conditioned utility (issue 8): a kernel over each item's past queries",
)


def item_credit(method: Method) -> Method:
    """``method`` with each injected item rewarded by its own relevance."""
    return replace(
        method,
        name=f"{method.name}-item",
        credit="item",
        description=f"as {method.name}, but each injected item is rewarded by its own relevance",
    )


UTILITY_ITEM = item_credit(UTILITY)
CONTEXTUAL_ITEM = item_credit(CONTEXTUAL)
NO_FEEDBACK = Method(
    "no-feedback",
    {},
    credit="none",
    description="Wolfie's ranking with the Pack's settings, but no rewards are given",
)
METHODS: dict[str, Method] = {
    m.name: m for m in (SIMILARITY, UTILITY, UTILITY_ITEM, CONTEXTUAL, CONTEXTUAL_ITEM, NO_FEEDBACK)
}


@dataclass(frozen=True)
class BenchQuery:
    id: str
    query: str
    relevant: frozenset[str]  # row ids


@dataclass(frozen=True)
class Rewards:
    hit: float = 1.0
    miss: float = -1.0


@dataclass(frozen=True)
class MethodRun:
    """One method's success rates. Index 0 of the held-out and train-before lists is
    before any training; index e is after epoch e."""

    method: str
    train_by_epoch: list[float]  # online success in each epoch (MemRL "SR")
    cumulative_by_epoch: list[float]  # share solved in at least one epoch so far (CSR)
    heldout_by_epoch: list[float]  # held-out success before training and after each epoch
    train_before: float  # training queries ranked before any training

    @property
    def last_train(self) -> float:
        return self.train_by_epoch[-1]

    @property
    def cumulative(self) -> float:
        return self.cumulative_by_epoch[-1]

    @property
    def heldout(self) -> float:
        return self.heldout_by_epoch[-1]


def success(pack: Pack, queries: Sequence[BenchQuery]) -> float:
    """Share of ``queries`` whose current top-k2 holds a relevant item (nothing logged)."""
    if not queries:
        return float("nan")
    hits = sum(bool(set(pack.search(q.query).ids) & q.relevant) for q in queries)
    return hits / len(queries)


def play(pack: Pack, query: BenchQuery, method: Method, rewards: Rewards) -> bool:
    """One episode: recall, judge by ground truth, reward. Returns whether it succeeded."""
    recall = pack.recall(query.query)
    episode = recall.episode_id or ""
    hit = bool(set(recall.ids) & query.relevant)
    if method.credit == "none":
        return hit
    if method.credit == "episode" or not recall.ids:
        pack.feedback(episode, rewards.hit if hit else rewards.miss)
        return hit
    useful = [i for i in recall.ids if i in query.relevant]
    useless = [i for i in recall.ids if i not in query.relevant]
    for ids, value in ((useful, rewards.hit), (useless, rewards.miss)):
        if ids:
            pack.apply_reward(
                episode, value, source="explicit", signal="item-relevance", memory_ids=ids
            )
    return hit


def run_method(
    pack: Pack,
    method: Method,
    train: Sequence[BenchQuery],
    heldout: Sequence[BenchQuery],
    orders: Sequence[Sequence[int]],
    rewards: Rewards | None = None,
) -> MethodRun:
    """Play ``train`` once per epoch in the given orders; rank ``heldout`` after each."""
    rewards = rewards or Rewards()
    heldout_rates = [success(pack, heldout)]
    train_before = success(pack, train)
    by_epoch, cumulative = [], []
    solved: set[str] = set()
    for order in orders:
        hits = [play(pack, train[i], method, rewards) for i in order]
        solved.update(train[i].id for i, hit in zip(order, hits, strict=True) if hit)
        by_epoch.append(sum(hits) / len(hits))
        cumulative.append(len(solved) / len(train))
        pack.flush()
        heldout_rates.append(success(pack, heldout))
    return MethodRun(method.name, by_epoch, cumulative, heldout_rates, train_before)
