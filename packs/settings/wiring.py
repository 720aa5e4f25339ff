"""Per-Pack reward wiring: which reward sources count, and how much.

Part of :class:`packs.settings.PackSettings` (``settings.rewards``), so it is stored and
versioned with the Pack. Defaults and their sources are listed in ``docs/rewards.md``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from packs.errors import InvalidSettings

SOURCES = ("explicit", "outcome", "vote", "implicit", "validation", "intrinsic")


def _default_weights() -> dict[str, float]:
    # Hand-set: implicit signals are noisier than a stated rating, so they move half as far.
    return {s: (0.5 if s == "implicit" else 1.0) for s in SOURCES}


def _default_vocabulary() -> dict[str, float]:
    # Hand-set, tune per Pack: acting on a memory is the strongest implicit evidence,
    # an edit means it was partly useful, ignoring it is weak evidence against it.
    return {"acted_on": 1.0, "accepted": 0.6, "edited": 0.2, "ignored": -0.3}


@dataclass(frozen=True)
class RewardWiring:
    """How each reward source turns into reward events for one Pack."""

    enabled: tuple[str, ...] = SOURCES
    weights: dict[str, float] = field(default_factory=_default_weights)
    outcome_scale: float = 1.0  # r = tanh(amount / scale); e.g. 1R for a trading journal
    vocabulary: dict[str, float] = field(default_factory=_default_vocabulary)
    vote_reward: float = 1.0  # +this behind the majority answer, -this behind a minority one
    # The NAME of a hook registered by the application (packs/hooks.py), never code.
    validation_hook: str | None = None
    validation_timeout_s: float = 5.0
    validation_pass: float = 0.25
    validation_fail: float = -1.0
    confidence_rate: float = 0.1  # slower than alpha (docs/rewards.md)
    intrinsic_weight: float = 0.2  # MISSION.md
    intrinsic_min_neighbours: int = 3
    intrinsic_neighbour_similarity: float = 0.5
    success_threshold: float = 0.5
    failure_threshold: float = -0.3

    def __post_init__(self) -> None:
        unknown = sorted(set(self.enabled) - set(SOURCES))
        if unknown:
            raise InvalidSettings(f"Unknown reward source(s) {unknown}; known: {list(SOURCES)}.")
        for source, weight in self.weights.items():
            if source not in SOURCES:
                raise InvalidSettings(f"weights has unknown source {source!r}.")
            _unit("weights[" + source + "]", weight, 0.0, 1.0)
        for name, value in self.vocabulary.items():
            if not isinstance(name, str) or not name:
                raise InvalidSettings(f"vocabulary signal names must be non-empty str: {name!r}")
            _unit(f"vocabulary[{name!r}]", value, -1.0, 1.0)
        _unit("outcome_scale", self.outcome_scale, 1e-12, 1e12)
        for name in ("vote_reward", "validation_pass", "confidence_rate", "intrinsic_weight"):
            _unit(name, getattr(self, name), 0.0, 1.0)
        _unit("validation_fail", self.validation_fail, -1.0, 0.0)
        _unit("validation_timeout_s", self.validation_timeout_s, 0.001, 3600.0)
        _unit("intrinsic_neighbour_similarity", self.intrinsic_neighbour_similarity, -1.0, 1.0)
        _unit("success_threshold", self.success_threshold, 0.0, 1.0)
        _unit("failure_threshold", self.failure_threshold, -1.0, 0.0)
        if not self.intrinsic_weight < self.success_threshold:
            # The echo-chamber guard (docs/rewards.md): intrinsic reward alone has its EMA
            # fixed point at most intrinsic_weight, which must stay below the success pool.
            raise InvalidSettings(
                f"intrinsic_weight={self.intrinsic_weight} must be below success_threshold="
                f"{self.success_threshold}, or intrinsic reward could promote a memory into "
                "the success pool it is scored against."
            )
        if not isinstance(self.intrinsic_min_neighbours, int) or self.intrinsic_min_neighbours < 1:
            raise InvalidSettings("intrinsic_min_neighbours must be a positive int.")
        hook = self.validation_hook
        if hook is not None and (not isinstance(hook, str) or not hook.strip() or len(hook) > 200):
            raise InvalidSettings(
                f"validation_hook must be the name of a registered hook (packs.hooks), "
                f"got {hook!r}."
            )

    def weight(self, source: str) -> float:
        """The step weight of ``source``; 0 when the source is switched off."""
        return self.weights.get(source, 1.0) if source in self.enabled else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["enabled"] = list(self.enabled)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RewardWiring:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidSettings(f"Unknown reward setting(s) {unknown}; known: {sorted(known)}.")
        data = dict(data)
        if "enabled" in data:
            data["enabled"] = tuple(data["enabled"])
        if "weights" in data:  # partial weights keep the defaults for the rest
            data["weights"] = {**_default_weights(), **data["weights"]}
        return cls(**data)


def _unit(name: str, value: object, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidSettings(f"{name} must be a number, got {type(value).__name__}.")
    if not math.isfinite(float(value)) or not low <= float(value) <= high:
        raise InvalidSettings(f"{name}={value!r} is outside [{low}, {high}].")
