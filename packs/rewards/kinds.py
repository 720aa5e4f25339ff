"""What a reward says, one type per kind: :meth:`packs.pack.Pack.reward` takes any of them.

- :class:`Rating`: an explicit rating in [-1, 1], or 1-5 stars (``(stars - 3) / 2``);
- :class:`Signal`: an implicit signal from the Pack's vocabulary (accepted, edited,
  ignored, ...), for the episode or the memories it names;
- :class:`Outcome`: a measured outcome (e.g. a P&L), as ``tanh(amount / outcome_scale)``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rating:
    value: float | None = None
    stars: int | None = None


@dataclass(frozen=True)
class Signal:
    name: str
    memory_ids: list[str] | None = None


@dataclass(frozen=True)
class Outcome:
    amount: float


Reward = Rating | Signal | Outcome
