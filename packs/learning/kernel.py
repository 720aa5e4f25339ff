"""A similarity kernel calibrated on the Pack's own rewards: how far a reward transfers.

The query-conditioned utility (``packs/learning/context.py``) weighs each past reward of a memory
by how close that episode's query was to this one. A hand-set hinge
``max(0, cos - theta)`` either drops paraphrases (at theta 0.8 half of real paraphrases
get no weight, docs/learning-notes.md) or lets rewards leak to unrelated questions (theta 0.5
lost 7.7 points on held-out questions). Here the weight is measured instead: over pairs
of rewards the same memory received for two queries at cosine ``c``,

    w+(c) = (P(helped j | helped i, c) - P(helped)) / (1 - P(helped))
    w-(c) = (P(failed j | failed i, c) - P(failed)) / (1 - P(failed))

clipped to [0, 1]: how much better than the base rate a past success (failure) predicts
this one. Each cosine bin's estimate is shrunk toward the hinge prior
``(c - theta) / (1 - theta)`` with ``prior_pairs`` pseudo-pairs (``settings.context``: so
a Pack with little evidence ranks as it did with the hinge), then made non-decreasing in
``c`` (pool adjacent violators): a closer query never predicts less.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

BINS = 20  # cosine bins of 0.05 over [0, 1]; negative cosines fall in the first
EXACT_REPEAT = 0.995  # a query asked again: its own bin, the last one


def hinge(cosines: NDArray[np.floating], theta: float) -> NDArray[np.float64]:
    """The prior kernel, scaled to 1 at ``cos = 1``: ``max(0, cos - theta) / (1 - theta)``."""
    return np.clip((np.asarray(cosines, dtype=np.float64) - theta) / (1.0 - theta), 0.0, 1.0)


def _bin(cosines: NDArray[np.floating]) -> NDArray[np.int64]:
    c = np.asarray(cosines, dtype=np.float64)
    index = np.clip((c * BINS).astype(np.int64), 0, BINS - 2)
    return np.where(c >= EXACT_REPEAT, BINS - 1, index)


def _centres() -> NDArray[np.float64]:
    centres = (np.arange(BINS) + 0.5) / BINS
    centres[-1] = 1.0
    return centres


def _monotone(values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weighted isotonic (non-decreasing) fit by pool adjacent violators."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for value, weight in zip(values.tolist(), weights.tolist(), strict=True):
        blocks.append([value, weight, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            total = w1 + w2
            blocks.append([(v1 * w1 + v2 * w2) / total, total, n1 + n2])
    return np.concatenate([np.full(int(n), v) for v, _, n in blocks])


@dataclass(frozen=True)
class Kernel:
    """Transfer weights per cosine bin, for positive and for negative evidence."""

    positive: NDArray[np.float64]  # (BINS,)
    negative: NDArray[np.float64]  # (BINS,)
    pairs: int  # pairs of rewards it was measured on

    def weights(
        self, cosines: NDArray[np.floating], rewards: NDArray[np.floating]
    ) -> NDArray[np.float64]:
        """The weight of each past reward for a query at ``cosines`` from its query."""
        bins = _bin(cosines)
        return np.where(np.asarray(rewards) > 0, self.positive[bins], self.negative[bins])


def prior_kernel(theta: float) -> Kernel:
    """No evidence yet: the hinge."""
    prior = hinge(_centres(), theta)
    prior[-1] = 1.0
    return Kernel(prior, prior.copy(), 0)


def calibrate(
    histories: Iterable[tuple[NDArray[np.floating], NDArray[np.floating]]],
    theta: float,
    prior_pairs: float,
    *,
    failures: bool = True,
) -> Kernel:
    """Measure the kernel on reward histories: (query vectors, rewards) per memory.

    ``failures=False`` measures only how successes transfer and keeps the hinge for
    failures, so a memory that failed elsewhere is not pushed down for new questions
    beyond what the hinge (and the hub prior) already do.
    """
    hits = np.zeros((2, BINS))  # [positive, negative] follow-ups that agreed
    counts = np.zeros((2, BINS))
    signs: list[NDArray[np.bool_]] = []
    pairs = 0
    for queries, rewards in histories:
        r = np.asarray(rewards, dtype=np.float64)
        signs.append(r > 0)
        if len(r) < 2:
            continue
        q = np.asarray(queries, dtype=np.float32)
        gram = q @ q.T
        i, j = np.where(~np.eye(len(r), dtype=bool))  # ordered pairs i != j
        bins = _bin(gram[i, j])
        for side, given in ((0, r[i] > 0), (1, r[i] < 0)):
            agree = (r[j] > 0) if side == 0 else (r[j] < 0)
            np.add.at(counts[side], bins[given], 1.0)
            np.add.at(hits[side], bins[given & agree], 1.0)
        pairs += len(i)
    prior = prior_kernel(theta).positive
    if not signs or pairs == 0:
        return prior_kernel(theta)
    helped = float(np.concatenate(signs).mean())
    base = np.array([helped, 1.0 - helped])
    out = []
    for side in (0, 1):
        rate = np.divide(hits[side], counts[side], out=np.zeros(BINS), where=counts[side] > 0)
        lift = np.clip((rate - base[side]) / max(1e-9, 1.0 - base[side]), 0.0, 1.0)
        shrunk = (counts[side] * lift + prior_pairs * prior) / (counts[side] + prior_pairs)
        out.append(_monotone(shrunk, counts[side] + prior_pairs))
    return Kernel(out[0], out[1] if failures else prior.copy(), pairs)


def shrunk(
    weights: NDArray[np.floating], rewards: NDArray[np.floating], prior: float, kappa: float
) -> tuple[float, float]:
    """The kernel-weighted mean reward shrunk toward ``prior`` by ``kappa`` pseudo-weight,
    and the share of it that is evidence, ``W / (W + kappa)`` with ``W = sum(weights)``."""
    total = float(np.sum(weights))
    return (float(weights @ rewards) + kappa * prior) / (total + kappa), total / (total + kappa)


def contextual_utility(
    query: NDArray[np.floating],
    history_queries: NDArray[np.floating],
    history_rewards: NDArray[np.floating],
    prior: float,
    theta: float,
    kappa: float,
    history_weights: NDArray[np.floating] | None = None,
) -> float:
    """``U(m | q)`` of ``packs/learning/context.py`` with the hinge kernel; the prior alone
    without history.

    ``history_weights`` are the rewards' own weights (an implicit signal counts 0.5, an
    intrinsic reward its blend weight, docs/rewards.md): each past reward weighs
    ``max(0, cos - theta) * weight``. Without them every reward weighs 1.
    """
    if len(history_rewards) == 0:
        return prior
    cosines = np.asarray(history_queries, np.float32) @ np.asarray(query, np.float32)
    weights = np.maximum(0.0, cosines - theta)
    if history_weights is not None:
        weights = weights * history_weights
    return shrunk(weights, np.asarray(history_rewards, np.float64), prior, kappa)[0]
