"""The online path's learned state: the EMA fold of :func:`packs.learning.ema.fold`
applied event by event to each memory's reward log.

A flush computes what it stores here, and never with :func:`packs.learning.replay.replay`
(the vectorised closed form): two independent computations of the same recurrence, so
``rebuild_utilities`` and the recompute flow's drift figure compare two paths, and a
wrong fold on either side shows as drift (tests/packs/learning/test_online_vs_replay.py).

Folding the whole log of each touched memory, in the replay's order
``(created_at, writer, seq)``, keeps concurrent writers correct: each writer's result is
a function of the events it read, a later read holds at least as many events, and the
store keeps the state that saw the most (``reward_count`` only grows,
docs/durability.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packs.lazy import lazy_module
from packs.learning.ema import LearnedState, RewardStep, fold

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

# What the online fold reads from the reward log, and the order it folds events in.
ONLINE_COLUMNS = (
    "memory_id",
    "created_at",
    "writer",
    "seq",
    "value",
    "alpha",
    "weight",
    "confidence_rate",
)
ORDER = ["memory_id", "created_at", "writer", "seq"]


def fold_log(events: pl.DataFrame) -> dict[str, LearnedState]:
    """Per memory: the :func:`fold` of its events, oldest first (``ORDER``)."""
    states: dict[str, LearnedState] = {}
    if events.height == 0:
        return states
    ordered = events.sort(ORDER)
    for (memory_id,), group in ordered.group_by("memory_id", maintain_order=True):
        steps = [
            RewardStep(value, alpha, weight, rate)
            for value, alpha, weight, rate in zip(
                group["value"],
                group["alpha"],
                group["weight"],
                group["confidence_rate"],
                strict=True,
            )
        ]
        states[str(memory_id)] = fold(steps)
    return states
