"""Query-conditioned utility: how useful a memory has been for queries like this one.

MemRL keeps one scalar utility per memory. A knowledge chunk answers many intents, and
one number leaks: a chunk rewarded for one question rises for unrelated ones too. Here a
memory's utility *for query q* is a kernel average of its own reward history, each past
reward weighted by how close that episode's query was to ``q``:

    w_e = max(0, cos(q, q_e) - theta)
    U(m | q) = (sum_e w_e r_e + kappa * prior) / (sum_e w_e + kappa)
    prior = min(Q, 0) if the memory never earned a positive reward, else 0

``Q`` is the global EMA utility, kept as the prior, the maturity input and the displayed
track record. The prior is asymmetric on purpose: a memory that never helped anyone (a
hub chunk) sinks for new queries too, while a memory that helped some query is judged
on queries like those it was rewarded on; its failures elsewhere do not follow it to
unrelated queries, and neither do its successes. ``kappa`` shrinks thin evidence
toward the prior. Defaults and the measurement behind them: ``docs/settings.md``
and ``docs/contextual.md``.

:class:`ContextIndex` keeps, per memory, the last ``history`` (query vector, reward)
pairs in memory (float16), so a recall costs a few small dot products and no table scan.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from packs.learning.credit import SlateEvidence
from packs.learning.kernel import Kernel, calibrate, shrunk
from packs.learning.links import LinkKeys, supporting_queries
from packs.learning.strategies import Prior, TransferKernel


class ContextRule(Protocol):
    """What the contextual index works by: ``settings.context``
    (:class:`packs.settings.ContextSettings`, where every default names its source)."""

    @property
    def mode(self) -> str: ...
    @property
    def theta(self) -> float: ...
    @property
    def kappa(self) -> float: ...
    @property
    def history(self) -> int: ...
    @property
    def prior(self) -> Prior: ...
    @property
    def kernel(self) -> TransferKernel: ...
    @property
    def links(self) -> int: ...
    @property
    def link_margin(self) -> float: ...
    @property
    def link_min_weight(self) -> float: ...
    @property
    def key_distinct_cos(self) -> float: ...
    @property
    def hub_distinct_queries(self) -> int: ...
    @property
    def distinct_cos(self) -> float: ...
    @property
    def prior_pairs(self) -> float: ...
    @property
    def recalibrate_growth(self) -> float: ...
    @property
    def credit(self) -> str: ...


def distinct_queries(queries: NDArray[np.floating], distinct_cos: float) -> int:
    """Count of query vectors no closer than ``distinct_cos`` to any earlier one."""
    x = np.asarray(queries, dtype=np.float32)
    if len(x) == 0:
        return 0
    close = np.tril(x @ x.T >= distinct_cos, k=-1)  # j < i and cos >= distinct_cos
    return int((~close.any(axis=1)).sum())


def history_entry(
    value: float, weight: float, source: str | None, magnitude: float | None
) -> tuple[float, float]:
    """(reward, weight) a logged reward event adds to a memory's history.

    An intrinsic event logs ``value = w_int * r_int`` with ``magnitude = r_int``: its
    history entry is ``r_int`` at weight ``weight * w_int``, so the cap on intrinsic
    reward (docs/brief.md: blended at 0.2) is a weight here too, not a full-weight
    observation of a small reward.
    """
    if source == "intrinsic" and magnitude:
        blend = abs(value / magnitude)
        return max(-1.0, min(1.0, float(magnitude))), float(weight) * blend
    return float(value), float(weight)


@dataclass
class _History:
    queries: NDArray[np.float16]  # (n, dim)
    rewards: NDArray[np.float64]  # (n,)
    weights: NDArray[np.float64]  # (n,) each reward's own weight
    episodes: tuple[str | None, ...] = ()  # (n,) the episode of each (None: not known)
    broad: bool = False  # its queries are at least rule.hub_distinct_queries distinct ones
    credited: tuple[int, NDArray[np.float64]] | None = None  # (evidence version, weights)

    def question(self, i: int) -> bytes:
        """The wording of entry ``i``: an exact repeat embeds to the same vector."""
        return self.queries[i].tobytes()


class ContextIndex:
    """Bounded per-memory reward history for query-conditioned utility.

    At most ``rule.history`` pairs per memory (the newest) and ``max_memories`` memories
    (least recently rewarded dropped first): about ``history * dim * 2`` bytes each.
    A memory dropped from the index keeps its "helped" and hub marks (a set of ids), so
    eviction never turns a hub back into a neutral memory.

    A memory counts as a hub (it fails broadly, never helps) once its recent failures
    come from at least ``rule.hub_distinct_queries`` distinct queries (queries closer than
    ``rule.distinct_cos`` count as one topic).
    """

    def __init__(self, dim: int, rule: ContextRule, max_memories: int = 20_000) -> None:
        self.dim = dim
        self.rule = rule
        self.max_memories = max_memories
        self.loaded = False
        self._items: OrderedDict[str, _History] = OrderedDict()
        self._helped: set[str] = set()  # memories with at least one positive reward
        self._hubs: set[str] = set()  # memories whose history is broad (see HUB_...)
        self._kernel: Kernel | None = None
        self._kernel_theta: tuple[float, bool] | None = None
        self._added = 0  # rewards added since the kernel was fitted
        self._fitted_on = 0
        self._links = LinkKeys(dim)  # associative links (packs/learning/links.py)
        self._links_for: ContextRule | None = None  # the rule the keys were built by
        self._unlinked: set[str] = set()  # memories whose keys are not current
        self.slates = SlateEvidence()  # the kept entries by question: slate credit

    def __len__(self) -> int:
        return len(self._items)

    def use_rule(self, rule: ContextRule) -> None:
        """Work by ``rule`` from now on (a settings change); keys rebuild if it moved."""
        self.rule = rule

    def clear(self) -> None:
        """Forget every history, mark and link (the index loads from the log again)."""
        self.__init__(self.dim, self.rule, self.max_memories)  # type: ignore[misc]

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._items or memory_id in self._helped

    def mark_helped(self, memory_ids: Iterable[str]) -> None:
        self._helped.update(memory_ids)

    def add(
        self,
        memory_id: str,
        query: NDArray[np.floating],
        reward: float,
        weight: float = 1.0,
        *,
        intrinsic: bool = False,
        episode: str | None = None,
    ) -> None:
        """Append one rewarded query to ``memory_id``'s history (the newest last).

        An intrinsic reward never marks a memory as helped: it is scored against the
        past and can't vouch for the memory on its own (docs/brief.md). ``episode`` ties
        the reward to the slate it was given to (slate credit, ``packs/learning/credit.py``).
        """
        arrays = np.array([reward]), np.array([weight]), np.array([intrinsic])
        self.extend(memory_id, query, *arrays, episodes=(episode,))

    def extend(
        self,
        memory_id: str,
        queries: NDArray[np.floating],
        rewards: NDArray[np.floating],
        weights: NDArray[np.floating],
        intrinsic: NDArray[np.bool_],
        episodes: Sequence[str | None] | None = None,
    ) -> None:
        """Append several rewarded queries at once, oldest first: the same state as one
        :meth:`add` each (a replay loads a memory's whole history this way)."""
        r = np.asarray(rewards, dtype=np.float64)
        given = tuple(episodes) if episodes is not None else (None,) * len(r)
        if np.any((r > 0) & ~np.asarray(intrinsic, dtype=bool)):
            self._helped.add(memory_id)
        vectors = np.asarray(queries, dtype=np.float16).reshape(-1, self.dim)
        w = np.asarray(weights, dtype=np.float64)
        item = self._items.get(memory_id)
        old: tuple[str | None, ...] = ()
        if item is not None:
            vectors = np.vstack([item.queries, vectors])
            r, w = np.concatenate([item.rewards, r]), np.concatenate([item.weights, w])
            old = item.episodes
        rule = self.rule
        keep = rule.history
        every = old + given
        start = max(0, len(every) - keep)
        item = _History(vectors[-keep:], r[-keep:], w[-keep:], every[start:])
        for episode in every[:start]:  # entries that fell out of the kept history
            if episode is not None and episode not in item.episodes:
                self._recredit(self.slates.remove(episode, memory_id))
        for i, episode in enumerate(item.episodes):
            if episode is not None and i >= len(item.episodes) - len(given):
                reward = float(item.rewards[i])
                self._recredit(self.slates.add(episode, item.question(i), memory_id, reward))
        item.broad = distinct_queries(item.queries, rule.distinct_cos) >= rule.hub_distinct_queries
        if item.broad:
            self._hubs.add(memory_id)
        else:
            self._hubs.discard(memory_id)
        self._items[memory_id] = item
        self._items.move_to_end(memory_id)
        self._added += len(np.atleast_1d(rewards))
        self._unlinked.add(memory_id)
        while len(self._items) > self.max_memories:
            evicted, gone = self._items.popitem(last=False)
            self._forget_entries(evicted, gone)
            self._links.drop([evicted])
            self._unlinked.discard(evicted)

    def drop(self, memory_id: str) -> None:
        """Forget ``memory_id``'s rewarded queries and marks: a revision made it a new
        action, whose utility for any query starts from the prior (docs/rewards.md)."""
        item = self._items.pop(memory_id, None)
        if item is not None:
            self._forget_entries(memory_id, item)
        self._helped.discard(memory_id)
        self._hubs.discard(memory_id)
        self._links.drop([memory_id])
        self._unlinked.discard(memory_id)

    def _recredit(self, memories: set[str]) -> None:
        """Their keys depend on a question whose evidence changed."""
        self._unlinked.update(m for m in memories if m in self._items)

    def _forget_entries(self, memory_id: str, item: _History) -> None:
        for episode in item.episodes:
            if episode is not None:
                self._recredit(self.slates.remove(episode, memory_id))

    def credited(self, memory_id: str) -> NDArray[np.float64]:
        """The weights of ``memory_id``'s kept rewards after slate credit: each reward's
        own weight times the memory's share of its episode's reward
        (:meth:`packs.learning.credit.SlateEvidence.share`); episode credit (MemRL's,
        every member the whole reward) when ``rule.credit`` is ``"episode"``."""
        item = self._items[memory_id]
        if self.rule.credit == "episode" or not any(item.episodes):
            return item.weights
        if item.credited is not None and item.credited[0] == self.slates.version:
            return item.credited[1]
        shares = np.array([self.slates.share(e, memory_id) for e in item.episodes])
        weights = item.weights * shares
        item.credited = (self.slates.version, weights)
        return weights

    def kernel(self, theta: float, failures: bool = True) -> Kernel:
        """The transfer kernel calibrated on these histories (``packs/learning/kernel.py``),
        refitted once they grew by ``rule.recalibrate_growth``."""
        stale = self._added > self.rule.recalibrate_growth * max(self._fitted_on, 50)
        if self._kernel is None or stale or (theta, failures) != self._kernel_theta:
            self._kernel = calibrate(
                ((item.queries, item.rewards) for item in self._items.values()),
                theta,
                self.rule.prior_pairs,
                failures=failures,
            )
            self._kernel_theta, self._fitted_on = (theta, failures), self._fitted_on + self._added
            self._added = 0
        return self._kernel

    def linked(self, query: NDArray[np.floating]) -> dict[str, float]:
        """Associative links (``packs/learning/links.py``): up to ``rule.links`` memories
        this query reaches through past queries they helped, with their key similarity
        ``cos(query, past query) - rule.link_margin``, best first."""
        rule = self.rule
        if rule.links <= 0 or not self._items:
            return {}
        if self._links_for != rule:
            self._links.clear()
            self._links_for = rule
            self._unlinked = set(self._items)
        for memory_id in self._unlinked:
            item = self._items[memory_id]
            keyable = None
            if rule.credit != "episode":  # one link per past question: its best memory
                best = [self.slates.best(item.question(i)) for i in range(len(item.episodes))]
                keyable = np.array(
                    [b == memory_id or e is None for b, e in zip(best, item.episodes, strict=True)],
                    bool,
                )
            credited = self.credited(memory_id)
            keys = supporting_queries(
                item.queries, item.rewards, item.weights, rule, credited, keyable
            )
            self._links.put(memory_id, *keys)
        self._unlinked.clear()
        return self._links.nearest(query, rule.link_margin, rule.links)

    def evidence(
        self, memory_id: str
    ) -> tuple[NDArray[np.float16], NDArray[np.float64], NDArray[np.float64]] | None:
        """The rewarded queries :meth:`assess` weighs for ``memory_id``: their vectors,
        rewards and own weights (an explanation's evidence, packs/recall/evidence.py)."""
        item = self._items.get(memory_id)
        return None if item is None else (item.queries, item.rewards, item.weights)

    def utility(self, memory_id: str, query: NDArray[np.floating], global_q: float) -> float:
        """``U(m | q)`` (the module docstring)."""
        return self.assess(memory_id, query, global_q)[0]

    def assess(
        self, memory_id: str, query: NDArray[np.floating], global_q: float
    ) -> tuple[float, float]:
        """``U(m | q)`` and the share of it that is evidence for queries like ``q``:
        ``W / (W + kappa)`` with ``W`` the kernel weight of the memory's history here (0
        when nothing it was rewarded for is near ``q``, so the rest is prior).

        Phase B scales a memory's confidence by this share: a track record earned on
        other questions neither vouches for a memory nor sinks it on this one.
        """
        rule = self.rule
        item = self._items.get(memory_id)
        broad = item.broad if item is not None else memory_id in self._hubs
        prior = rule.prior(global_q, memory_id in self._helped, broad)
        if item is None:
            return prior, 0.0
        cosines = item.queries.astype(np.float32) @ np.asarray(query, dtype=np.float32)
        credited = self.credited(memory_id)
        weights = rule.kernel.weights(cosines, item.rewards, rule.theta, self) * credited
        return shrunk(weights, item.rewards, prior, rule.kernel.kappa(rule.kappa, rule.theta))
