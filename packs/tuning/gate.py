"""Adopt a fitted change only when held-out questions say it is better.

Each held-out question gives one paired difference: the replayed success of the fitted
settings minus that of the settings in force (:mod:`packs.tuning.replay`). The mean
difference gets a percentile bootstrap interval over questions (Efron and Tibshirani
1993, ch. 13), resampling whole questions so that a question's episodes stay together.
A change is adopted only when the interval's lower end is above zero: a confidence
bound, not a point estimate (safe policy improvement, Thomas et al. 2015, "High
Confidence Policy Improvement").

The Pack is shared by its scopes (users, sessions), so no one scope may buy a gain for the
others with its own loss, or steer the Pack with rewards of its own: with ``groups`` (each
question's scope) a change is refused when any scope holding at least
:data:`MIN_SCOPE_QUESTIONS` held-out questions loses more than :data:`SCOPE_MARGIN` on
them, and the comparison names every scope it was made on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CONFIDENCE = 0.95  # two-sided percentile interval: adopt when the 2.5 % bound is above 0
RESAMPLES = 2000  # bootstrap resamples (the bound moves by < 0.1 point between seeds)
MIN_SCOPE_QUESTIONS = 5  # hand-set: a scope with fewer held-out questions can't show a loss
SCOPE_MARGIN = 0.01  # hand-set: a scope may lose at most a point of replayed success
SHARED = "(shared)"  # the label of questions recalled without a scope


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
    scopes: dict[str, float] = field(default_factory=dict)  # scope -> its mean difference
    refused_by: str | None = None  # a scope that would lose more than SCOPE_MARGIN

    @property
    def better(self) -> bool:
        return self.low > 0.0 and self.refused_by is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "differing": self.differing,
            "in_force": self.in_force,
            "fitted": self.fitted,
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "scopes": dict(self.scopes),
            "refused_by": self.refused_by,
        }


def compare(
    fitted: Mapping[int, float],
    in_force: Mapping[int, float],
    *,
    seed: int = 0,
    groups: Mapping[int, str] | None = None,
) -> Comparison:
    """Paired bootstrap of ``fitted - in_force`` over the questions both hold; with
    ``groups`` (question -> scope) each scope's own mean difference, and the scope that
    refuses the change, if any (the module docstring)."""
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
    scopes: dict[str, list[float]] = {}
    for key, diff in zip(keys, d.tolist(), strict=True):
        scopes.setdefault((groups or {}).get(key, SHARED), []).append(diff)
    per_scope = {scope: float(np.mean(v)) for scope, v in sorted(scopes.items())}
    losing = [
        scope
        for scope, v in scopes.items()
        if len(v) >= MIN_SCOPE_QUESTIONS and per_scope[scope] < -SCOPE_MARGIN
    ]
    return Comparison(
        len(keys),
        int(np.count_nonzero(np.abs(d) > 1e-12)),
        float(b.mean()),
        float(a.mean()),
        float(d.mean()),
        float(low),
        float(high),
        per_scope if groups is not None else {},
        min(losing, key=per_scope.__getitem__) if losing else None,
    )
