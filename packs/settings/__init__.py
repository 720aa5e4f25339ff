"""Per-Pack settings: retrieval weights, learning rates and write policies.

Settings are stored with the Pack (``pack_meta`` table) and versioned there, so two
Packs built by the same code can be wired differently. Every default and its source
(MemRL's configs, a measurement, or a hand-set guess to tune) is listed in
``docs/settings.md``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from packs.errors import InvalidSettings
from packs.learning.context import KERNELS, PRIORS
from packs.settings.wiring import RewardWiring

# Measured in docs/dedup.md: the threshold with the best F0.5 (precision weighted,
# because a false merge loses a memory while a missed merge only stores a near-copy).
DEFAULT_DEDUP_THRESHOLD = 0.89
# Hybrid Phase A fused by reciprocal rank, or by a z-scored blend; or cosine only.
LEXICAL_MODES = ("rrf", "zscore", "off")


@dataclass(frozen=True)
class PackSettings:
    """Everything a Pack can be tuned with. Unknown keys are rejected."""

    alpha: float = 0.3
    lam: float = 0.5
    k1: int = 10
    k2: int = 3
    delta: float = 0.25
    w_confidence: float = 0.1
    explore_bonus: float = 0.1
    dedup_threshold: float = DEFAULT_DEDUP_THRESHOLD
    z_floor_similarity: float = 0.02
    z_floor_utility: float = 0.3
    z_floor_confidence: float = 0.1
    z_clip: float = 3.0
    failure_utility: float = -0.3
    max_text_chars: int = 20_000
    log_flush_rows: int = 256
    log_flush_seconds: float = 5.0
    compact_every_commits: int = 64
    version_retention_hours: float = 24.0
    utility_mode: str = "contextual"  # or "global" (plain MemRL)
    context_theta: float = 0.8
    context_kappa: float = 0.2
    context_history: int = 16
    context_prior: str = "never-helped"  # or "negative", "global" (packs/learning/context.py)
    context_kernel: str = "hinge"  # or "calibrated" (packs/learning/kernel.py)
    context_links: int = 3  # associative links: memories past queries like this one reach
    link_margin: float = 0.15  # a past query's key similarity: its cosine minus this
    lexical: str = "zscore"  # Phase A adds BM25's top-k1; blended z-scores (or rrf, off)
    rrf_k: int = 60  # reciprocal-rank fusion constant (Cormack et al. 2009)
    lexical_weight: float = 0.4  # BM25's weight beside cosine's 1 (validation fold)
    thompson_scale: float = 0.0  # sd of recall's posterior draw of U(m|q) with no evidence
    explore_seed: int = 0  # seeds each handle's draws, so a run can be replayed
    blame_relief: float = 0.0  # a failure weighs 1 - relief * max(0, U(m|q)) per item
    spread: float = 0.0  # adjacency links: share of a neighbour chunk's score it passes on
    spread_decay: float = 0.5  # per extra position of distance (packs/recall/spread.py)
    spread_hops: int = 1  # neighbours this many positions away in one source
    inhibition: float = 0.0  # a pick lowers its cluster neighbours' scores by this
    default_ttl_hours: float | None = None  # remember()'s expiry when none is given; off
    rewards: RewardWiring = field(default_factory=RewardWiring)

    def __post_init__(self) -> None:
        _check_range("alpha", self.alpha, 0.0, 1.0, low_open=True)
        _check_range("lam", self.lam, 0.0, 1.0)
        _check_range("delta", self.delta, -1.0, 1.0)
        _check_range("dedup_threshold", self.dedup_threshold, 0.0, 1.0)
        _check_range("w_confidence", self.w_confidence, 0.0, 10.0)
        _check_range("explore_bonus", self.explore_bonus, 0.0, 10.0)
        _check_range("failure_utility", self.failure_utility, -1.0, 1.0)
        for name in ("z_floor_similarity", "z_floor_utility", "z_floor_confidence", "z_clip"):
            _check_range(name, getattr(self, name), 0.0, 100.0, low_open=True)
        _check_range("log_flush_seconds", self.log_flush_seconds, 0.0, 86_400.0)
        _check_range("version_retention_hours", self.version_retention_hours, 0.0, 24.0 * 365)
        _check_int("context_links", self.context_links, 0, 100)
        for name in ("k1", "k2", "max_text_chars", "log_flush_rows", "compact_every_commits",
                     "context_history", "rrf_k"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidSettings(f"{name} must be a positive int, got {value!r}.")
        if self.utility_mode not in ("contextual", "global"):
            raise InvalidSettings(
                f"utility_mode must be 'contextual' or 'global', not {self.utility_mode!r}."
            )
        _check_range("context_theta", self.context_theta, -1.0, 1.0)
        if self.context_prior not in PRIORS:
            raise InvalidSettings(
                f"context_prior must be one of {', '.join(PRIORS)}; not {self.context_prior!r}."
            )
        _check_range("context_kappa", self.context_kappa, 0.0, 1e6, low_open=True)
        _check_range("link_margin", self.link_margin, 0.0, 2.0)
        _check_range("lexical_weight", self.lexical_weight, 0.0, 10.0)
        _check_range("thompson_scale", self.thompson_scale, 0.0, 2.0)
        _check_range("blame_relief", self.blame_relief, 0.0, 1.0)
        _check_range("spread", self.spread, 0.0, 1.0)
        _check_range("spread_decay", self.spread_decay, 0.0, 1.0)
        _check_range("inhibition", self.inhibition, 0.0, 10.0)
        _check_int("spread_hops", self.spread_hops, 0, 8)
        if self.default_ttl_hours is not None:
            _check_range("default_ttl_hours", self.default_ttl_hours, 0.0, 24.0 * 365 * 100,
                         low_open=True)  # fmt: skip
        if isinstance(self.explore_seed, bool) or not isinstance(self.explore_seed, int):
            raise InvalidSettings(f"explore_seed must be an int, got {self.explore_seed!r}.")
        if self.context_kernel not in KERNELS:
            raise InvalidSettings(
                f"context_kernel must be one of {', '.join(KERNELS)}; not {self.context_kernel!r}."
            )
        if self.lexical not in LEXICAL_MODES:
            raise InvalidSettings(
                f"lexical must be one of {', '.join(LEXICAL_MODES)}; not {self.lexical!r}."
            )
        if self.k2 > self.k1:
            raise InvalidSettings(f"k2={self.k2} must not exceed k1={self.k1}.")
        if not isinstance(self.rewards, RewardWiring):
            raise InvalidSettings("rewards must be a RewardWiring (or a dict in from_dict).")

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["rewards"] = self.rewards.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PackSettings:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidSettings(
                f"Unknown Pack setting(s) {unknown}; known settings are {sorted(known)}."
            )
        data = dict(data)
        if isinstance(data.get("rewards"), dict):
            data["rewards"] = RewardWiring.from_dict(data["rewards"])
        return cls(**data)

    def replace(self, **changes: Any) -> PackSettings:
        """A copy with ``changes``; a ``rewards`` dict changes only the keys it names."""
        current = self.to_dict()
        if isinstance(changes.get("rewards"), dict):
            changes["rewards"] = {**current["rewards"], **changes["rewards"]}
        return self.from_dict({**current, **changes})


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidSettings(f"{name} must be an int from {low} to {high}, got {value!r}.")


def _check_range(
    name: str, value: object, low: float, high: float, *, low_open: bool = False
) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidSettings(f"{name} must be a number, got {type(value).__name__}.")
    number = float(value)
    below = number <= low if low_open else number < low
    if not math.isfinite(number) or below or number > high:
        bracket = "(" if low_open else "["
        raise InvalidSettings(f"{name}={value!r} is outside {bracket}{low}, {high}].")


@dataclass
class ActiveSettings:
    """The settings an open Pack works by now, and their stored version. Shared by the
    Pack's services, so a :meth:`Pack.configure` reaches every one of them."""

    value: PackSettings
    version: int
