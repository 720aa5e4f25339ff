"""Reward math: pure functions, no I/O.

Utility follows MemRL's exponential moving average ``Q <- Q + a·w·(r - Q)`` with
``r`` in [-1, 1], ``a`` the Pack's ``alpha`` (MemRL: 0.3) and ``w`` in [0, 1] the weight
of the reward source. Because ``Q`` starts at 0 and each step is a convex combination of
``Q`` and ``r``, ``Q`` stays in [-1, 1].

Lesson confidence moves on a separate, slower track (rate ``b``, default 0.1 < a):
``c <- c + b·w·(s - c)`` with ``s = (1 + d·r) / 2`` where ``d`` is the lesson's direction
(+1 "do this", -1 "avoid this"). A reward that confirms the lesson pushes ``c`` toward 1,
one that contradicts it toward 0, a neutral one toward 0.5. ``d`` is the memory's
polarity when one is set, else the sign of ``Q`` before the step, else the sign of ``r``
(the first evidence sets the direction). ``c`` stays in [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_CONFIDENCE_RATE = 0.1  # hand-set: a third of MemRL's alpha, so it moves slower


def ema_step(q: float, reward: float, alpha: float, weight: float = 1.0) -> float:
    """One utility update: ``Q + alpha·weight·(r - Q)``."""
    return q + alpha * weight * (reward - q)


def lesson_direction(q_before: float, reward: float, polarity: str | None) -> int:
    """+1 when the lesson says "do this", -1 for "avoid this" (see module docstring)."""
    if polarity == "success":
        return 1
    if polarity == "failure":
        return -1
    if q_before > 0:
        return 1
    if q_before < 0:
        return -1
    return 1 if reward >= 0 else -1


def confidence_step(
    c: float, q_before: float, reward: float, rate: float, weight: float, polarity: str | None
) -> float:
    """One confidence update ``c + rate·weight·(s - c)``, ``s = (1 + d·r)/2``."""
    target = (1.0 + lesson_direction(q_before, reward, polarity) * reward) / 2.0
    return c + rate * weight * (target - c)


@dataclass(frozen=True)
class RewardStep:
    """One reward applied to one memory, with the rates that were in force."""

    value: float
    alpha: float
    weight: float = 1.0
    confidence_rate: float = DEFAULT_CONFIDENCE_RATE


@dataclass(frozen=True)
class LearnedState:
    utility: float
    confidence: float
    reward_count: int


def fold(
    steps: Iterable[RewardStep],
    start: LearnedState | None = None,
    polarity: str | None = None,
) -> LearnedState:
    """Apply ``steps`` in order. The online path and the replay both use this."""
    state = start or LearnedState(0.0, 0.0, 0)
    q, c, n = state.utility, state.confidence, state.reward_count
    for step in steps:
        c = confidence_step(c, q, step.value, step.confidence_rate, step.weight, polarity)
        q = ema_step(q, step.value, step.alpha, step.weight)
        n += 1
    return LearnedState(q, c, n)
