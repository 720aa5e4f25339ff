"""How far one reward can be trusted: the flip rate of the Pack's own rewards.

A memory rewarded twice for the same question should get the same sign twice, unless the
reward is noisy. With a flip rate ``eps`` (each reward's sign wrong with probability
``eps``, a binary symmetric channel) two rewards of one memory at one question disagree
with probability ``D = 2 eps (1 - eps)``, so ``eps = (1 - sqrt(1 - 2D)) / 2``. ``D`` is
counted over every pair of rewards of one memory at one question, shrunk toward a clean
Pack by :data:`PRIOR_PAIRS` agreeing pseudo-pairs, so a Pack with few repeats reads as
reliable until it shows otherwise.

Measured on the learning benchmark's validation folds (``docs/tuning.md``): clean
episode rewards disagree in 0.1-1 % of pairs (a bystander rewarded in one episode and
punished in another), 20 % flipped and 50 % sparse rewards in 25-36 %.

A noisy reward carries less information: the Fisher information of one observation
through a binary symmetric channel is ``(1 - 2 eps)**2`` that of a clean one (Cover and
Thomas, *Elements of Information Theory*, ch. 7-8), so the prior's pseudo-weight kappa is
divided by it (:func:`noisy_kappa`): one flipped punishment moves a memory less in a
Pack whose rewards disagree often.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

PRIOR_PAIRS = 2.0  # hand-set: two agreeing pseudo-pairs (a Pack reads clean until shown noisy)
MAX_FLIP = 0.45  # at 0.5 a reward carries nothing; beyond it the channel reads inverted


def disagreement(signs: Iterable[tuple[int, int]]) -> tuple[float, int]:
    """``D`` from (positives, negatives) counts per (question, memory), and the pairs."""
    agree = disagree = 0
    for positives, negatives in signs:
        disagree += positives * negatives
        agree += positives * (positives - 1) // 2 + negatives * (negatives - 1) // 2
    pairs = agree + disagree
    return disagree / (pairs + PRIOR_PAIRS), pairs


def flip_rate(d: float) -> float:
    """``eps`` from the disagreement rate ``D = 2 eps (1 - eps)``, at most :data:`MAX_FLIP`."""
    d = min(max(d, 0.0), 0.5)
    return min((1.0 - math.sqrt(1.0 - 2.0 * d)) / 2.0, MAX_FLIP)


def noisy_kappa(kappa: float, eps: float) -> float:
    """The prior pseudo-weight for rewards with flip rate ``eps``: ``kappa / (1 - 2 eps)**2``."""
    return kappa / (1.0 - 2.0 * min(eps, MAX_FLIP)) ** 2
