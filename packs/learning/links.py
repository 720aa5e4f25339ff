"""Associative links: past questions a memory helped with, as extra retrieval keys for it.

doc2query-style expansion (Nogueira et al. 2019, arXiv:1904.08375), learned online: a
past query that a memory helped with becomes a key for that memory, and a new query
reaches the memory through its nearest key at ``cos(query, key) - margin`` (the *key
similarity*). Phase A (``packs/recall/phases.py``) adds the memory to the pool and ranks
it by its key where that would have put it among the k2 best; ``docs/contextual.md``
has the rules and the measurements behind them.

:class:`LinkKeys` holds every memory's keys in one float32 matrix with spare capacity.
A memory whose history changed has its old rows marked dead and its new keys appended
(the matrix is compacted once half of it is dead), so a reward costs a few rows, not a
rebuild, and a recall one matrix-vector product over the live keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from packs.learning.kernel import contextual_utility

# Float noise on a tied history (+1 then -1 for one wording sums to about 1e-9, not 0).
SUPPORT_EPSILON = 1e-6


class KeyRule(Protocol):
    """What key building works by (``settings.context``; docs/settings.md)."""

    @property
    def theta(self) -> float: ...
    @property
    def kappa(self) -> float: ...
    @property
    def link_min_weight(self) -> float: ...
    @property
    def key_distinct_cos(self) -> float: ...


def supporting_queries(
    queries: NDArray[np.floating],
    rewards: NDArray[np.floating],
    weights: NDArray[np.floating],
    rule: KeyRule,
    credited: NDArray[np.floating] | None = None,
    keyable: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """A memory's keys from its reward history, and each key's support (the memory's
    utility for that wording). Keys are the queries rewarded > 0 with weight >=
    ``rule.link_min_weight`` (an explicit reward or an implicit signal, never an
    intrinsic reward, which can't vouch for a memory on its own) for which the memory's
    utility *for that wording* (its whole history weighed by the hinge ``max(0, cos -
    theta)``, shrunk by ``kappa``) is still positive, so later failures for the same
    wording withdraw the key (a flipped reward is outvoted, not kept). Near-duplicates
    (``rule.key_distinct_cos``) are kept once.

    With slate credit, ``credited`` are the weights after it (the support is the
    utility of credited evidence) and ``keyable`` marks the rewards whose question named
    this memory its most probable answer
    (:meth:`packs.learning.credit.SlateEvidence.best`): a past question is a key for
    one memory at most, never for the bystanders that shared its slate."""
    r, w = np.asarray(rewards, np.float64), np.asarray(weights, np.float64)
    q = np.asarray(queries, np.float32)
    vouch = (r > 0) & (w >= rule.link_min_weight)
    if keyable is not None:
        vouch &= keyable
    if credited is not None:
        w = np.asarray(credited, np.float64)
    if not vouch.any():
        return np.zeros((0, q.shape[1]), np.float32), np.zeros(0)
    keys = q[vouch]
    support = np.array(
        [contextual_utility(key, q, r, 0.0, rule.theta, rule.kappa, w) for key in keys]
    )
    kept: list[int] = []
    for i in np.flatnonzero(support > SUPPORT_EPSILON):  # a tie (+1, -1) is no support
        if all(float(keys[i] @ keys[j]) < rule.key_distinct_cos for j in kept):
            kept.append(int(i))
    return keys[kept], support[kept]


class LinkKeys:
    """Every memory's keys in one growable matrix (see the module docstring)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._vectors = np.zeros((64, dim), np.float32)
        self._owner = np.zeros(64, np.int64)  # index into _names
        self._live = np.zeros(64, bool)
        self._support = np.zeros(64)  # the memory's utility for the key's wording
        self._used = 0
        self._names: list[str] = []
        self._slot: dict[str, int] = {}  # memory id -> index into _names
        self._rows: dict[str, NDArray[np.int64]] = {}  # memory id -> its live rows

    def __len__(self) -> int:
        return int(self._live[: self._used].sum())

    def put(
        self, memory_id: str, keys: NDArray[np.floating], support: NDArray[np.floating]
    ) -> None:
        """Replace ``memory_id``'s keys and their support (none: it has no key any more)."""
        self.drop([memory_id])
        if not len(keys):
            return
        slot = self._slot.setdefault(memory_id, len(self._names))
        if slot == len(self._names):
            self._names.append(memory_id)
        start, count = self._used, len(keys)
        self._reserve(start + count)
        self._vectors[start : start + count] = keys
        self._owner[start : start + count] = slot
        self._support[start : start + count] = support
        self._live[start : start + count] = True
        self._used += count
        self._rows[memory_id] = np.arange(start, start + count)

    def drop(self, memory_ids: Iterable[str]) -> None:
        for memory_id in memory_ids:
            rows = self._rows.pop(memory_id, None)
            if rows is not None:
                self._live[rows] = False
        if self._used > 1024 and len(self) < self._used // 2:
            self._compact()

    def clear(self) -> None:
        self.__init__(self.dim)  # type: ignore[misc]

    def nearest(self, query: NDArray[np.floating], margin: float, limit: int) -> dict[str, float]:
        """Up to ``limit`` memories by their best key similarity, best first; among equal
        keys (one past question vouches for every memory an episode reward credited) the
        better supported first, so the memory that kept helping wins the tie.

        How far a key may reach is the Pack's to fit (``context.theta``, ``context.links``:
        ``packs/tuning/``); siblings of one template no longer need a rule of their own.
        """
        if limit <= 0 or not self._rows:
            return {}
        scores = self._vectors[: self._used] @ np.asarray(query, np.float32)
        scores[~self._live[: self._used]] = -np.inf
        # the best rows first; a memory with several keys counts once, by its best
        shortlist = min(len(scores), max(limit * 16, 64))
        top = np.argpartition(-scores, shortlist - 1)[:shortlist]
        top = top[np.lexsort((-self._support[top], -scores[top]))]
        top = top[np.isfinite(scores[top])]
        out: dict[str, float] = {}
        for row in top.tolist():
            out.setdefault(self._names[self._owner[row]], float(scores[row]) - margin)
            if len(out) == limit:
                break
        return out

    def _reserve(self, rows: int) -> None:
        if rows <= len(self._vectors):
            return
        size = max(rows, 2 * len(self._vectors))
        self._vectors = np.resize(self._vectors, (size, self.dim))
        self._owner = np.resize(self._owner, size)
        self._support = np.resize(self._support, size)
        live = np.zeros(size, bool)
        live[: self._used] = self._live[: self._used]
        self._live = live

    def _compact(self) -> None:
        rows = {m: (self._vectors[r], self._support[r]) for m, r in self._rows.items()}
        self.clear()
        for memory_id, (keys, support) in rows.items():
            self.put(memory_id, keys, support)
