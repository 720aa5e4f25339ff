"""Intrinsic reward: score a response against the Pack's past, in cosine space.

Adapted from Memory-R+ (arXiv 2504.02273). For an episode's response ``v``:

- **exploit** = ``cos(v, centroid of the responses of successful memories whose intent is
  similar to the episode's query)``; a memory is successful when its utility is at least
  the Pack's ``success_threshold``;
- **explore** = ``-max(0, max cos(v, failed responses to similar intents))``: a pure
  penalty for resembling a known failure, never a bonus;
- ``r_int = clip(exploit + explore, -1, 1)``, and it is **silent** (``None``) when fewer
  than ``min_neighbours`` successful neighbours qualify: a cold store gives no reward
  rather than noise.

The reward event carries ``w * r_int`` with ``w = intrinsic_weight`` (0.2). **Why it can
never promote a memory into the success pool** (threshold ``t > w``): one EMA step gives
``Q' = (1 - a) Q + a v`` with ``a`` in [0, 1], a convex combination of ``Q`` and
``v <= w``. If ``Q < t`` then ``Q' <= max(Q, w) < t``. By induction no sequence of
intrinsic-only rewards lifts ``Q`` from below ``t`` to ``t``, and the fixed point of a
constant intrinsic reward ``v`` is ``v <= w * max(r_int) <= w < t``. The settings refuse
``w >= t`` (``RewardSettings``), and ``tests/packs/rewards/test_intrinsic.py`` checks the property
with Hypothesis.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def intrinsic_reward(
    response: NDArray[np.floating],
    successes: NDArray[np.floating],
    failures: NDArray[np.floating],
    min_neighbours: int,
) -> float | None:
    """``r_int`` in [-1, 1] for a unit ``response`` vector, or None on a cold store.

    ``successes`` and ``failures`` are ``(n, dim)`` unit response vectors of the
    qualifying neighbours (similar intents).
    """
    if len(successes) < min_neighbours:
        return None
    centroid = np.asarray(successes, dtype=np.float64).mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    exploit = float(np.dot(response, centroid) / norm) if norm > 1e-12 else 0.0
    explore = 0.0
    if len(failures):
        explore = -max(0.0, float(np.max(np.asarray(failures, dtype=np.float64) @ response)))
    return float(np.clip(exploit + explore, -1.0, 1.0))
