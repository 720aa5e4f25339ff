"""Ranking, contextual-utility and flush settings. Every default names its source in
``docs/settings.md`` (MemRL's configs, a measurement, or a hand-set guess to tune)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_serializer, field_validator, model_validator

from packs.learning.strategies import KERNELS, PRIORS, Prior, TransferKernel
from packs.settings.base import Group

# Hybrid Phase A fused by a z-scored blend or by reciprocal rank; or cosine only
# (the strategies: packs/recall/fusion.py, fusion_for).
LexicalMode = Literal["zscore", "rrf", "off"]


class RankingSettings(Group):
    """Phase A (recall) and Phase B (re-rank)."""

    _where: ClassVar[str] = "ranking"

    lam: float = Field(0.5, ge=0.0, le=1.0)
    k1: int = Field(10, ge=1, le=10_000)
    k2: int = Field(3, ge=1, le=10_000)
    delta: float = Field(0.25, ge=-1.0, le=1.0)
    w_confidence: float = Field(0.1, ge=0.0, le=10.0)
    explore_bonus: float = Field(0.1, ge=0.0, le=10.0)
    z_floor_similarity: float = Field(0.02, gt=0.0, le=100.0)
    z_floor_utility: float = Field(0.3, gt=0.0, le=100.0)
    z_floor_confidence: float = Field(0.1, gt=0.0, le=100.0)
    z_clip: float = Field(3.0, gt=0.0, le=100.0)
    failure_utility: float = Field(-0.3, ge=-1.0, le=1.0)
    lexical: LexicalMode = "zscore"
    rrf_k: int = Field(60, ge=1, le=100_000)
    lexical_weight: float = Field(0.4, ge=0.0, le=10.0)
    thompson_scale: float = Field(0.0, ge=0.0, le=2.0)
    explore_seed: int = 0
    spread: float = Field(0.0, ge=0.0, le=1.0)
    spread_decay: float = Field(0.5, ge=0.0, le=1.0)
    spread_hops: int = Field(1, ge=0, le=8)
    inhibition: float = Field(0.0, ge=0.0, le=10.0)
    reserve_top: bool = True
    explore_share: float = Field(0.0, ge=0.0, le=0.05)
    explore_cold_questions: int = Field(200, ge=0, le=10_000_000)

    @model_validator(mode="after")
    def _k2_within_k1(self) -> RankingSettings:
        if self.k2 > self.k1:
            raise ValueError(f"k2={self.k2} must not exceed k1={self.k1}")
        return self


class ContextSettings(Group):
    """The query-conditioned utility ``U(m | q)`` and associative links
    (``packs/learning/``, docs/contextual.md)."""

    model_config = Group.model_config | {"arbitrary_types_allowed": True}
    _where: ClassVar[str] = "context"

    mode: Literal["contextual", "global"] = "contextual"  # global: plain MemRL's one Q
    theta: float = Field(0.8, ge=-1.0, le=1.0)
    kappa: float = Field(0.2, gt=0.0, le=1e6)
    history: int = Field(16, ge=1, le=10_000)
    prior: Prior = PRIORS["never-helped"]
    kernel: TransferKernel = KERNELS["hinge"]
    links: int = Field(3, ge=0, le=100)
    link_margin: float = Field(0.15, ge=0.0, le=2.0)
    link_min_weight: float = Field(0.5, ge=0.0, le=1.0)
    key_distinct_cos: float = Field(0.98, ge=-1.0, le=1.0)
    hub_distinct_queries: int = Field(3, ge=1, le=10_000)
    distinct_cos: float = Field(0.5, ge=-1.0, le=1.0)
    prior_pairs: float = Field(20.0, ge=0.0, le=1e6)
    recalibrate_growth: float = Field(0.1, gt=0.0, le=1e6)
    credit: Literal["slate", "episode"] = "episode"

    @field_validator("prior", mode="before")
    @classmethod
    def _prior(cls, value: Any) -> Any:
        return _strategy("context.prior", value, PRIORS)

    @field_validator("kernel", mode="before")
    @classmethod
    def _kernel(cls, value: Any) -> Any:
        return _strategy("context.kernel", value, KERNELS)

    @field_serializer("prior", "kernel")
    def _name(self, value: Prior | TransferKernel) -> str:
        return value.name

    @property
    def contextual(self) -> bool:
        return self.mode == "contextual"


def _strategy(name: str, value: Any, known: dict[str, Any]) -> Any:
    """A strategy's stored name -> the strategy (an instance passes through)."""
    if isinstance(value, str):
        if value not in known:
            raise ValueError(f"must be one of {', '.join(known)}")
        return known[value]
    return value


class FlushSettings(Group):
    """Write buffering and compaction (docs/durability.md)."""

    _where: ClassVar[str] = "flush"

    rows: int = Field(256, ge=1, le=10_000_000)
    seconds: float = Field(5.0, ge=0.0, le=86_400.0)
    compact_every_commits: int = Field(64, ge=1, le=10_000_000)
    version_retention_hours: float = Field(24.0, ge=0.0, le=24.0 * 365)
    # Hand-set: one purge a minute keeps a server's time spent purging under a tenth at
    # 300k rows (4.4 s a purge, issue 31); a "purge now" waits a minute at most.
    purge_every_seconds: float = Field(60.0, ge=0.0, le=86_400.0)


class TuningSettings(Group):
    """Self-tuning (``packs/tuning/``, docs/tuning.md)."""

    _where: ClassVar[str] = "tuning"

    # After a reward, once the log holds 64 rewarded episodes and each time they double,
    # the Pack tunes itself (adopting only what held-out replay shows better); off: only
    # `wolfie tune` and the tune-pack deployment tune it.
    auto: bool = True
