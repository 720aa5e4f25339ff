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

from packs.learning.kernel import Kernel, calibrate, shrunk
from packs.learning.links import LinkKeys, supporting_queries

PRIORS = ("never-helped", "negative", "global")
# "calibrated-successes": only successes transfer by the measured kernel, failures by the
# hinge (packs/learning/kernel.py).
KERNELS = ("hinge", "calibrated", "calibrated-successes")
# A key links only if it beats the keys of every other past question by this cosine
# (hand-set, tuned on the validation fold): see LinkKeys.nearest.
LINK_MIN_GAP = 0.01
# Past queries within this cosine of a memory's nearest one count as its nearest evidence
# for an associative link (hand-set: the same wording asked again, or a trivial edit).
NEAREST_EVIDENCE_COS = 0.02
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
        self._links = LinkKeys(dim)  # associative links (packs/learning/links.py)
        self._links_for: tuple[float, float] | None = None  # the (theta, kappa) they used
        self._unlinked: set[str] = set()  # memories whose keys are not current

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every history, mark and link (the index loads from the log again)."""
        self.__init__(self.dim, self.history, self.max_memories)  # type: ignore[misc]

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._items or memory_id in self._helped

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
        self._unlinked.add(memory_id)
        while len(self._items) > self.max_memories:
            evicted, _ = self._items.popitem(last=False)
            self._links.drop([evicted])
            self._unlinked.discard(evicted)

    def kernel(self, theta: float, failures: bool = True) -> Kernel:
        """The transfer kernel calibrated on these histories (``packs/learning/kernel.py``),
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
        self, query: NDArray[np.floating], theta: float, kappa: float, margin: float,
        limit: int,
    ) -> dict[str, float]:  # fmt: skip
        """Associative links (``packs/learning/links.py``): up to ``limit`` memories this
        query reaches through past queries they helped, with their key similarity
        ``cos(query, past query) - margin``, best first."""
        if limit <= 0 or not self._items:
            return {}
        if self._links_for != (theta, kappa):
            self._links.clear()
            self._links_for = (theta, kappa)
            self._unlinked = set(self._items)
        for memory_id in self._unlinked:
            item = self._items[memory_id]
            keys = supporting_queries(item.queries, item.rewards, item.weights, theta, kappa)
            self._links.put(memory_id, *keys)
        self._unlinked.clear()
        # A link proposes; the memory's nearest evidence disposes. A memory that failed
        # for queries like this one (cos >= theta, the kernel's own "like"), nearer than
        # anything else it was rewarded for, is not brought in by a key it earned further
        # away: "topic 5" where it failed, not "topic 3" where it helped.
        links = self._links.nearest(query, margin, 2 * limit, LINK_MIN_GAP)
        kept = [m for m in links if self._nearest_evidence(m, query, theta) > 0.0]
        return {m: links[m] for m in kept[:limit]}

    def _nearest_evidence(self, memory_id: str, query: NDArray[np.floating], theta: float) -> float:
        """The weighted reward sum of the memory's past queries nearest ``query`` (within
        NEAREST_EVIDENCE_COS of the nearest); +inf when none is within ``theta``."""
        item = self._items[memory_id]
        cosines = item.queries.astype(np.float32) @ np.asarray(query, dtype=np.float32)
        if float(cosines.max()) < theta:
            return float("inf")
        near = cosines >= float(cosines.max()) - NEAREST_EVIDENCE_COS
        return float((item.rewards * item.weights)[near].sum())

    def utility(
        self, memory_id: str, query: NDArray[np.floating], global_q: float, theta: float,
        kappa: float, prior_mode: str = "never-helped", kernel: str = "hinge",
    ) -> float:  # fmt: skip
        """``U(m | q)`` (the module docstring)."""
        return self.assess(memory_id, query, global_q, theta, kappa, prior_mode, kernel)[0]

    def assess(
        self, memory_id: str, query: NDArray[np.floating], global_q: float, theta: float,
        kappa: float, prior_mode: str = "never-helped", kernel: str = "hinge",
    ) -> tuple[float, float]:  # fmt: skip
        """``U(m | q)`` and the share of it that is evidence for queries like ``q``:
        ``W / (W + kappa)`` with ``W`` the kernel weight of the memory's history here (0
        when nothing it was rewarded for is near ``q``, so the rest is prior).

        Phase B scales a memory's confidence by this share: a track record earned on
        other questions neither vouches for a memory nor sinks it on this one.
        """
        item = self._items.get(memory_id)
        broad = item.broad if item is not None else memory_id in self._hubs
        prior = context_prior(global_q, memory_id in self._helped, prior_mode, broad)
        if item is None:
            return prior, 0.0
        cosines = item.queries.astype(np.float32) @ np.asarray(query, dtype=np.float32)
        if kernel == "hinge":
            weights = np.maximum(0.0, cosines - theta) * item.weights
            scaled = kappa
        else:
            fitted = self.kernel(theta, failures=kernel == "calibrated")
            weights = fitted.weights(cosines, item.rewards) * item.weights
            # The calibrated kernel is 1 at cos 1 where the hinge is 1 - theta: kappa is
            # rescaled so that without evidence both rank alike.
            scaled = kappa / (1.0 - theta)
        return shrunk(weights, item.rewards, prior, scaled)
