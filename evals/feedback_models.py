"""Feedback models of the learning benchmark: how real users' rewards differ from truth.

Ground truth says whether an episode succeeded (a relevant item was injected). Real
feedback is noisier, rarer and sometimes finer-grained, so the benchmark can degrade it:

- ``sparse``: the share of episodes that get any reward (users rate some answers only);
- ``flip``: the share of the given rewards whose sign is wrong (a user clicks the wrong
  button, or judges on something else);
- ``credit``: ``episode`` gives the episode's reward to every injected item (MemRL,
  ``feedback``); ``item`` says which injected items were used, with the Pack's implicit
  signals (``signal(..., memory_ids=)``): ``acted_on`` for the relevant ones and
  ``ignored`` for the others, and a failed episode is rated -1 (``feedback``), as the
  demo's simulated user does (``evals/episodes.py``).

Rates are exact, not Bernoulli draws: in every epoch ``round(sparse * n)`` episodes are
rewarded and ``round(flip * rewarded)`` of those are flipped, chosen by a generator
seeded with the run's seed. The plan depends on the epoch and the position in the play
order only, so every method sees the same episodes dropped and flipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from packs.errors import InvalidInput

CREDITS = ("episode", "item")


@dataclass(frozen=True)
class FeedbackModel:
    flip: float = 0.0
    sparse: float = 1.0  # share of episodes rewarded
    credit: str = "episode"

    def __post_init__(self) -> None:
        if not 0.0 <= self.flip <= 1.0:
            raise InvalidInput(f"flip must be a share in [0, 1], got {self.flip!r}.")
        if not 0.0 < self.sparse <= 1.0:
            raise InvalidInput(f"sparse must be a share in (0, 1], got {self.sparse!r}.")
        if self.credit not in CREDITS:
            raise InvalidInput(f"credit must be one of {CREDITS}, got {self.credit!r}.")

    @property
    def label(self) -> str:
        parts = []
        if self.flip:
            parts.append(f"{100 * self.flip:.0f}% flipped")
        if self.sparse < 1.0:
            parts.append(f"{100 * self.sparse:.0f}% of episodes rewarded")
        parts.append(f"{self.credit} credit")
        return ", ".join(parts) if len(parts) > 1 else f"clean, {parts[0]}"


@dataclass(frozen=True)
class RewardPlan:
    """Per epoch and play position: whether the episode is rewarded, and flipped."""

    rewarded: np.ndarray  # bool, (epochs, n)
    flipped: np.ndarray  # bool, (epochs, n); only where rewarded


def reward_plan(model: FeedbackModel, seed: int, epochs: int, n: int) -> RewardPlan:
    """Exact-rate masks (see the module docstring), seeded by ``seed``."""
    rng = np.random.default_rng([seed, 0x5EED])
    rewarded = np.zeros((epochs, n), dtype=bool)
    flipped = np.zeros((epochs, n), dtype=bool)
    for epoch in range(epochs):
        given = rng.permutation(n)[: round(model.sparse * n)]
        rewarded[epoch, given] = True
        wrong = rng.permutation(given)[: round(model.flip * len(given))]
        flipped[epoch, wrong] = True
    return RewardPlan(rewarded, flipped)
