"""Per-Pack reward settings: the learning rates, and which reward sources count and how
much. Part of :class:`packs.settings.PackSettings` (``settings.rewards``), so they are
stored and versioned with the Pack. Defaults and their sources: ``docs/rewards.md``."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from packs.settings.base import Group

SOURCES = ("explicit", "outcome", "vote", "implicit", "validation", "intrinsic")


def _default_weights() -> dict[str, float]:
    # Hand-set: implicit signals are noisier than a stated rating, so they move half as far.
    return {s: (0.5 if s == "implicit" else 1.0) for s in SOURCES}


def _default_vocabulary() -> dict[str, float]:
    # Hand-set, tune per Pack: acting on a memory is the strongest implicit evidence,
    # an edit means it was partly useful, ignoring it is weak evidence against it.
    return {"acted_on": 1.0, "accepted": 0.6, "edited": 0.2, "ignored": -0.3}


class RewardSettings(Group):
    """How rewards move utilities, and how each source turns into reward events."""

    _where: ClassVar[str] = "rewards"

    alpha: float = Field(0.3, gt=0.0, le=1.0)  # MemRL's EMA rate
    confidence_rate: float = Field(0.1, ge=0.0, le=1.0)  # slower than alpha
    blame_relief: float = Field(0.0, ge=0.0, le=1.0)  # a failure's share: 1 - relief·U(m|q)
    enabled: tuple[str, ...] = SOURCES
    weights: dict[str, float] = Field(default_factory=_default_weights)
    outcome_scale: float = Field(1.0, ge=1e-12, le=1e12)  # r = tanh(amount / scale)
    vocabulary: dict[str, float] = Field(default_factory=_default_vocabulary)
    vote_reward: float = Field(1.0, ge=0.0, le=1.0)  # +this behind the majority answer
    # The NAME of a hook registered by the application (packs/hooks.py), never code.
    validation_hook: str | None = Field(None, min_length=1, max_length=200)
    validation_timeout_s: float = Field(5.0, ge=0.001, le=3600.0)
    validation_pass: float = Field(0.25, ge=0.0, le=1.0)
    validation_fail: float = Field(-1.0, ge=-1.0, le=0.0)
    intrinsic_weight: float = Field(0.2, ge=0.0, le=1.0)  # docs/brief.md
    intrinsic_min_neighbours: int = Field(3, ge=1, le=10_000)
    intrinsic_neighbour_similarity: float = Field(0.5, ge=-1.0, le=1.0)
    intrinsic_candidates: int = Field(50, ge=1, le=10_000)  # neighbours read per pool
    success_threshold: float = Field(0.5, ge=0.0, le=1.0)
    failure_threshold: float = Field(-0.3, ge=-1.0, le=0.0)

    @field_validator("enabled", mode="before")
    @classmethod
    def _sources(cls, value: Any) -> Any:
        value = tuple(value) if isinstance(value, list) else value
        if isinstance(value, tuple):
            unknown = sorted(set(value) - set(SOURCES))
            if unknown:
                raise ValueError(f"unknown reward source(s) {unknown}; known: {list(SOURCES)}")
        return value

    @field_validator("weights", mode="before")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        if isinstance(value, dict):  # partial weights keep the defaults for the rest
            unknown = sorted(set(value) - set(SOURCES))
            if unknown:
                raise ValueError(f"unknown reward source(s) {unknown}; known: {list(SOURCES)}")
            return {**_default_weights(), **value}
        return value

    @field_validator("weights")
    @classmethod
    def _unit_weights(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {s: w for s, w in value.items() if not 0.0 <= w <= 1.0}
        if bad:
            raise ValueError(f"weights must be in [0, 1], got {bad}")
        return value

    @field_validator("vocabulary")
    @classmethod
    def _vocabulary(cls, value: dict[str, float]) -> dict[str, float]:
        for name, reward in value.items():
            if not name or not -1.0 <= reward <= 1.0:
                raise ValueError(
                    f"vocabulary maps non-empty signal names to rewards in [-1, 1], got "
                    f"{name!r}: {reward!r}"
                )
        return value

    @field_validator("validation_hook")
    @classmethod
    def _hook(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("validation_hook must be the name of a registered hook")
        return value

    @model_validator(mode="after")
    def _echo_chamber_guard(self) -> RewardSettings:
        if not self.intrinsic_weight < self.success_threshold:
            # The echo-chamber guard (docs/rewards.md): intrinsic reward alone has its EMA
            # fixed point at most intrinsic_weight, which must stay below the success pool.
            raise ValueError(
                f"intrinsic_weight={self.intrinsic_weight} must be below success_threshold="
                f"{self.success_threshold}, or intrinsic reward could promote a memory into "
                "the success pool it is scored against"
            )
        return self

    def weight(self, source: str) -> float:
        """The step weight of ``source``; 0 when the source is switched off."""
        return self.weights.get(source, 1.0) if source in self.enabled else 0.0
