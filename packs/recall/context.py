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
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from packs.recall.kernel import Kernel, calibrate

PRIORS = ("never-helped", "negative", "global")
# "calibrated-successes": only successes transfer by the measured kernel, failures by the
# hinge (packs/recall/kernel.py).
KERNELS = ("hinge", "calibrated", "calibrated-successes")
# A linked memory joins the pool only with a contextual utility above this from its
# links alone (hand-set, to tune on the validation split): strong evidence, not a hint.
LINK_MIN_UTILITY = 0.3
# Recalibrate the kernel once the histories grew by this share since the last fit
# (hand-set: a fit costs a 16 x 16 Gram matrix per memory with history).
RECALIBRATE_GROWTH = 0.1


# A memory counts as a hub (it fails broadly, never helps) once its recent failures come
# from at least this many distinct queries; queries closer than DISTINCT_COS count as
# one topic. Measured on the learning benchmark (docs/contextual.md): a plausible wrong
# neighbour fails for a few questions on its own topic, a hub for unrelated ones. 0.95
# (only paraphrases merged) demoted chunks that item-level credit had punished on their
# own topic (held-out -5.6 pts on man pages); 0.5 lost nothing on either corpus.
HUB_DISTINCT_QUERIES = 3
DISTINCT_COS = 0.5


def distinct_queries(queries: NDArray[np.floating]) -> int:
    """Count of query vectors no closer than DISTINCT_COS to any earlier one."""
    x = np.asarray(queries, dtype=np.float32)
    if len(x) == 0:
        return 0
    close = np.tril(x @ x.T >= DISTINCT_COS, k=-1)  # j < i and cos >= DISTINCT_COS
    return int((~close.any(axis=1)).sum())


def context_prior(global_q: float, helped: bool, mode: str, broad: bool = True) -> float:
    """The prior a memory's utility shrinks toward, for queries unlike its history.

    ``global``: the global Q itself (plain MemRL transfer, positive evidence leaks).
    ``negative``: ``min(Q, 0)``: only evidence against a memory transfers.
    ``never-helped`` (default): ``min(Q, 0)`` only for memories that never earned a
    positive reward and failed ``broad``-ly (for several distinct queries): a hub. A
    memory that helped some query, or failed for one or two, is judged on similar
    queries only.
    """
    if mode == "global":
        return global_q
    if mode == "negative" or (not helped and broad):
        return min(global_q, 0.0)
    return 0.0


def contextual_utility(
    query: NDArray[np.floating],
    history_queries: NDArray[np.floating],
    history_rewards: NDArray[np.floating],
    prior: float,
    theta: float,
    kappa: float,
    history_weights: NDArray[np.floating] | None = None,
) -> float:
    """``U(m | q)`` as in the module docstring; the prior alone without history.

    ``history_weights`` are the rewards' own weights (an implicit signal counts 0.5, an
    intrinsic reward its blend weight, docs/rewards.md): each past reward weighs
    ``max(0, cos - theta) * weight``. Without them every reward weighs 1.
    """
    if len(history_rewards) == 0:
        return prior
    cosines = history_queries.astype(np.float32) @ query.astype(np.float32)
    weights = np.maximum(0.0, cosines - theta)
    if history_weights is not None:
        weights = weights * history_weights
    total = float(weights.sum())
    return (float(weights @ history_rewards) + kappa * prior) / (total + kappa)


def history_entry(
    value: float, weight: float, source: str | None, magnitude: float | None
) -> tuple[float, float]:
    """(reward, weight) a logged reward event adds to a memory's history.

    An intrinsic event logs ``value = w_int * r_int`` with ``magnitude = r_int``: its
    history entry is ``r_int`` at weight ``weight * w_int``, so the cap on intrinsic
    reward (MISSION.md: blended at 0.2) is a weight here too, not a full-weight
    observation of a small reward.
    """
    if source == "intrinsic" and magnitude:
        blend = abs(value / magnitude)
        return max(-1.0, min(1.0, float(magnitude))), float(weight) * blend
    return float(value), float(weight)


# every history entry: query vectors, owner index, reward, weight; and the owners' ids
_Stack = tuple[
    NDArray[np.float16], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], list[str]
]


@dataclass
class _History:
    queries: NDArray[np.float16]  # (n, dim)
    rewards: NDArray[np.float64]  # (n,)
    weights: NDArray[np.float64]  # (n,) each reward's own weight
    broad: bool = False  # its queries are at least HUB_DISTINCT_QUERIES distinct ones


class ContextIndex:
    """Bounded per-memory reward history for query-conditioned utility.

    At most ``history`` pairs per memory (the newest) and ``max_memories`` memories
    (least recently rewarded dropped first): about ``history * dim * 2`` bytes each.
    A memory dropped from the index keeps its "helped" and hub marks (a set of ids), so
    eviction never turns a hub back into a neutral memory.
    """

    def __init__(self, dim: int, history: int, max_memories: int = 20_000) -> None:
        self.dim = dim
        self.history = history
        self.max_memories = max_memories
        self.loaded = False
        self._items: OrderedDict[str, _History] = OrderedDict()
        self._helped: set[str] = set()  # memories with at least one positive reward
        self._hubs: set[str] = set()  # memories whose history is broad (see HUB_...)
        self._kernel: Kernel | None = None
        self._kernel_theta: tuple[float, bool] | None = None
        self._added = 0  # rewards added since the kernel was fitted
        self._fitted_on = 0
        self._stack: _Stack | None = None

    def __len__(self) -> int:
        return len(self._items)

    def mark_helped(self, memory_ids: Iterable[str]) -> None:
        self._helped.update(memory_ids)

    def add(
        self, memory_id: str, query: NDArray[np.floating], reward: float,
        weight: float = 1.0, *, intrinsic: bool = False,
    ) -> None:  # fmt: skip
        """Append one rewarded query to ``memory_id``'s history (the newest last).

        An intrinsic reward never marks a memory as helped: it is scored against the
        past and can't vouch for the memory on its own (MISSION.md).
        """
        if reward > 0 and not intrinsic:
            self._helped.add(memory_id)
        item = self._items.get(memory_id)
        vector = np.asarray(query, dtype=np.float16).reshape(1, self.dim)
        if item is None:
            item = _History(vector, np.array([reward]), np.array([weight]))
        else:
            item = _History(
                np.vstack([item.queries, vector])[-self.history :],
                np.append(item.rewards, reward)[-self.history :],
                np.append(item.weights, weight)[-self.history :],
            )
        item.broad = distinct_queries(item.queries) >= HUB_DISTINCT_QUERIES
        if item.broad:
            self._hubs.add(memory_id)
        else:
            self._hubs.discard(memory_id)
        self._items[memory_id] = item
        self._items.move_to_end(memory_id)
        self._added += 1
        self._stack = None
        while len(self._items) > self.max_memories:
            self._items.popitem(last=False)

    def extend(self, rows: Iterable[tuple[str, NDArray[np.floating], float]]) -> None:
        for memory_id, query, reward in rows:
            self.add(memory_id, query, reward)

    def kernel(self, theta: float, failures: bool = True) -> Kernel:
        """The transfer kernel calibrated on these histories (``packs/recall/kernel.py``),
        refitted once they grew by RECALIBRATE_GROWTH."""
        stale = self._added > RECALIBRATE_GROWTH * max(self._fitted_on, 50)
        if self._kernel is None or stale or (theta, failures) != self._kernel_theta:
            self._kernel = calibrate(
                ((item.queries, item.rewards) for item in self._items.values()), theta,
                failures=failures,
            )  # fmt: skip
            self._kernel_theta, self._fitted_on = (theta, failures), self._fitted_on + self._added
            self._added = 0
        return self._kernel

    def linked(
        self, query: NDArray[np.floating], theta: float, kappa: float, limit: int,
        kernel: str = "calibrated",
    ) -> list[str]:  # fmt: skip
        """Associative links: up to ``limit`` memories whose rewards for past queries like
        this one (weighed by the calibrated kernel) give a utility above
        LINK_MIN_UTILITY, best first. Phase A adds them to the candidate pool."""
        if limit <= 0 or not self._items:
            return []
        queries, owners, rewards, own_weights, names = self._stacked()
        cosines = queries.astype(np.float32) @ np.asarray(query, dtype=np.float32)
        fitted = self.kernel(theta, failures=kernel != "calibrated-successes")
        weights = fitted.weights(cosines, rewards) * own_weights
        near = weights > 0
        if not near.any():
            return []
        total = np.bincount(owners[near], weights[near], minlength=len(names))
        score = np.bincount(owners[near], (weights * rewards)[near], minlength=len(names))
        utility = score / (total + kappa / (1.0 - theta))
        best = np.argsort(-utility)[:limit]
        return [names[i] for i in best if utility[i] > LINK_MIN_UTILITY]

    def _stacked(self) -> _Stack:
        """Every history entry in one matrix (rebuilt after a change): one product per
        recall finds the past queries near this one."""
        if self._stack is None:
            names = list(self._items)
            items = list(self._items.values())
            self._stack = (
                np.vstack([item.queries for item in items]),
                np.repeat(np.arange(len(items)), [len(item.rewards) for item in items]),
                np.concatenate([item.rewards for item in items]),
                np.concatenate([item.weights for item in items]),
                names,
            )
        return self._stack

    def utility(
        self, memory_id: str, query: NDArray[np.floating], global_q: float, theta: float,
        kappa: float, prior_mode: str = "never-helped", kernel: str = "hinge",
    ) -> float:  # fmt: skip
        item = self._items.get(memory_id)
        broad = item.broad if item is not None else memory_id in self._hubs
        prior = context_prior(global_q, memory_id in self._helped, prior_mode, broad)
        if item is None:
            return prior
        if kernel != "hinge":
            cosines = item.queries.astype(np.float32) @ np.asarray(query, dtype=np.float32)
            fitted = self.kernel(theta, failures=kernel == "calibrated")
            weights = fitted.weights(cosines, item.rewards) * item.weights
            # The calibrated kernel is 1 at cos 1 where the hinge is 1 - theta: kappa is
            # rescaled so that without evidence both rank alike.
            scaled = kappa / (1.0 - theta)
            total = float(weights.sum())
            return (float(weights @ item.rewards) + scaled * prior) / (total + scaled)
        return contextual_utility(
            query, item.queries, item.rewards, prior, theta, kappa, item.weights
        )
