"""Query-conditioned utility: how useful a memory has been for queries like this one.

MemRL keeps one scalar utility per memory. A knowledge chunk answers many intents, and
one number leaks: a chunk rewarded for one question rises for unrelated ones too. Here a
memory's utility *for query q* is a kernel average of its own reward history, each past
reward weighted by how close that episode's query was to ``q``:

    w_e = max(0, cos(q, q_e) - theta)
    U(m | q) = (sum_e w_e r_e + kappa * prior) / (sum_e w_e + kappa)
    prior = min(Q, 0)

``Q`` is the global EMA utility, kept as the prior, the maturity input and the displayed
track record. The prior is clipped at 0 on purpose: evidence *against* a memory holds
across queries (a hub chunk that never helps anyone sinks for new queries too), while
evidence *for* it transfers only through similar past queries. ``kappa`` shrinks thin
evidence toward the prior. Defaults and the measurement behind them: ``docs/settings.md``
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


def contextual_utility(
    query: NDArray[np.floating],
    history_queries: NDArray[np.floating],
    history_rewards: NDArray[np.floating],
    global_q: float,
    theta: float,
    kappa: float,
) -> float:
    """``U(m | q)`` as in the module docstring; ``global_q`` alone without history."""
    prior = min(global_q, 0.0)
    if len(history_rewards) == 0:
        return prior
    cosines = history_queries.astype(np.float32) @ query.astype(np.float32)
    weights = np.maximum(0.0, cosines - theta)
    total = float(weights.sum())
    return (float(weights @ history_rewards) + kappa * prior) / (total + kappa)


@dataclass
class _History:
    queries: NDArray[np.float16]  # (n, dim)
    rewards: NDArray[np.float64]  # (n,)


class ContextIndex:
    """Bounded per-memory reward history for query-conditioned utility.

    At most ``history`` pairs per memory (the newest) and ``max_memories`` memories
    (least recently touched dropped first): about ``history * dim * 2`` bytes each.
    """

    def __init__(self, dim: int, history: int, max_memories: int = 20_000) -> None:
        self.dim = dim
        self.history = history
        self.max_memories = max_memories
        self.loaded = False
        self._items: OrderedDict[str, _History] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, memory_id: str, query: NDArray[np.floating], reward: float) -> None:
        item = self._items.get(memory_id)
        vector = np.asarray(query, dtype=np.float16).reshape(1, self.dim)
        if item is None:
            item = _History(vector, np.array([reward]))
        else:
            item = _History(
                np.vstack([item.queries, vector])[-self.history :],
                np.append(item.rewards, reward)[-self.history :],
            )
        self._items[memory_id] = item
        self._items.move_to_end(memory_id)
        while len(self._items) > self.max_memories:
            self._items.popitem(last=False)

    def extend(self, rows: Iterable[tuple[str, NDArray[np.floating], float]]) -> None:
        for memory_id, query, reward in rows:
            self.add(memory_id, query, reward)

    def utility(
        self, memory_id: str, query: NDArray[np.floating], global_q: float, theta: float,
        kappa: float,
    ) -> float:  # fmt: skip
        item = self._items.get(memory_id)
        if item is None:
            return contextual_utility(query, np.zeros((0, self.dim)), np.zeros(0), global_q,
                                      theta, kappa)  # fmt: skip
        return contextual_utility(query, item.queries, item.rewards, global_q, theta, kappa)
