"""Reward math: pure functions, no I/O.

Utility follows MemRL's exponential moving average ``Q <- Q + a·w·(r - Q)`` with
``r`` in [-1, 1], ``a`` the Pack's ``alpha`` (MemRL: 0.3) and ``w`` in [0, 1] the weight
of the reward source. Because ``Q`` starts at 0 and each step is a convex combination of
``Q`` and ``r``, ``Q`` stays in [-1, 1].

Lesson confidence moves on a separate, slower track (rate ``b``, default 0.1 < a). It
measures how *consistently* the evidence points one way, whichever way that is:
``c <- c + b·w·(s - c)`` with ``s = (1 + d·r) / 2``, where ``d`` is the sign of ``Q``
before the step (the direction the evidence so far points), or the sign of ``r`` when
``Q`` is exactly 0 (the first evidence sets the direction). A reward that agrees with the
running utility pushes ``c`` toward 1, one that contradicts it toward 0, a neutral one
toward 0.5, so ``c`` stays in [0, 1]. A memory's polarity does not enter: a WARNING that
helped an episode is evidence *for* its lesson, exactly like a success example that
helped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


def ema_step(q: float, reward: float, alpha: float, weight: float = 1.0) -> float:
    """One utility update: ``Q + alpha·weight·(r - Q)``."""
    return q + alpha * weight * (reward - q)


# |Q| below this counts as "no direction yet", in the online path and the replay alike,
# so float noise in a vectorised replay can't flip a direction.
DIRECTION_EPS = 1e-12


def evidence_direction(q_before: float, reward: float) -> int:
    """+1 or -1: the sign of the utility so far, or of the reward when it is ~0."""
    if q_before > DIRECTION_EPS:
        return 1
    if q_before < -DIRECTION_EPS:
        return -1
    return 1 if reward >= 0 else -1


def confidence_step(c: float, q_before: float, reward: float, rate: float, weight: float) -> float:
    """One confidence update ``c + rate·weight·(s - c)``, ``s = (1 + d·r)/2``."""
    target = (1.0 + evidence_direction(q_before, reward) * reward) / 2.0
    return c + rate * weight * (target - c)


@dataclass(frozen=True)
class RewardStep:
    """One reward applied to one memory, with the rates that were in force."""

    value: float
    alpha: float
    weight: float
    confidence_rate: float  # settings.rewards.confidence_rate at the time


# A revision that changes what a memory tells the agent (its response or polarity) is a
# new action, so its utility goes back to the prior (docs/rewards.md, "Revising"). It is
# logged as one reward event of this source with this step: a full step (a·w = 1) to
# r = 0 sets Q to exactly 0 and confidence to exactly 0.5 (s = 1/2 for r = 0), and
# counts as one event, so the stored state stays the fold of the append-only log, the
# replay needs no special case, and reward_count still only grows (the concurrent-writer
# guard of packs/learning/state.py holds).
REVISION_SOURCE = "revision"
REVISION_STEP = RewardStep(value=0.0, alpha=1.0, weight=1.0, confidence_rate=1.0)


@dataclass(frozen=True)
class LearnedState:
    utility: float
    confidence: float
    reward_count: int


def fold(steps: Iterable[RewardStep], start: LearnedState | None = None) -> LearnedState:
    """Apply ``steps`` in order. The online path and the replay both use this."""
    state = start or LearnedState(0.0, 0.0, 0)
    q, c, n = state.utility, state.confidence, state.reward_count
    for step in steps:
        if step.weight == 0.0:  # a recorded but switched-off source is no evidence
            continue
        c = confidence_step(c, q, step.value, step.confidence_rate, step.weight)
        q = ema_step(q, step.value, step.alpha, step.weight)
        n += 1
    return LearnedState(q, c, n)


def failure_shares(
    ranked_utility: Mapping[str, float], targets: Sequence[str], relief: float
) -> dict[str, float]:
    """Each injected memory's share of a failed episode's blame, as a weight in [0, 1].

    ``share = 1 - relief · max(0, U(m | q))``, with ``U(m | q)`` the utility the memory
    was ranked by in that episode. An episode's failure says that *some* item misled, not
    which: a memory with a good record for questions like this one is the least likely
    culprit, so it takes less of the blame; one with no record, or a bad one, takes all
    of it (slate credit assignment; hand-set ``relief``, tuned on the validation fold,
    docs/rewards.md). Successes are never shared out: every injected item gets them.
    """
    return {m: 1.0 - relief * max(0.0, float(ranked_utility.get(m, 0.0))) for m in targets}
