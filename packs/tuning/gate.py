"""Adopt a fitted change only when held-out questions say it is better.

Each held-out question gives one paired difference: the replayed success of the fitted
settings minus that of the settings in force (:mod:`packs.tuning.replay`). The mean
difference gets a percentile bootstrap interval over questions (Efron and Tibshirani
1993, ch. 13), resampling whole questions so that a question's episodes stay together.
A change is adopted only when the interval's lower end is above zero: a confidence
bound, not a point estimate (safe policy improvement, Thomas et al. 2015, "High
Confidence Policy Improvement").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95  # two-sided percentile interval: adopt when the 2.5 % bound is above 0
RESAMPLES = 2000  # bootstrap resamples (the bound moves by < 0.1 point between seeds)


@dataclass(frozen=True)
class Comparison:
    """A fitted setting against the settings in force, on the same held-out questions."""

    questions: int  # held-out questions compared
    differing: int  # questions where the two replays differ at all
    in_force: float  # mean replayed success, settings in force
    fitted: float  # mean replayed success, fitted settings
    difference: float  # fitted - in force
    low: float  # bootstrap bound, CONFIDENCE two-sided
    high: float

    @property
    def better(self) -> bool:
        return self.low > 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "questions": self.questions,
            "differing": self.differing,
            "in_force": self.in_force,
            "fitted": self.fitted,
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
        }


def compare(
    fitted: Mapping[int, float], in_force: Mapping[int, float], *, seed: int = 0
) -> Comparison:
    """Paired bootstrap of ``fitted - in_force`` over the questions both hold."""
    keys = sorted(set(fitted) & set(in_force))
    a = np.array([fitted[k] for k in keys], dtype=np.float64)
    b = np.array([in_force[k] for k in keys], dtype=np.float64)
    if not keys:
        return Comparison(0, 0, float("nan"), float("nan"), 0.0, 0.0, 0.0)
    d = a - b
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (RESAMPLES, len(d)))].mean(axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Comparison(
        len(keys),
        int(np.count_nonzero(np.abs(d) > 1e-12)),
        float(b.mean()),
        float(a.mean()),
        float(d.mean()),
        float(low),
        float(high),
    )
