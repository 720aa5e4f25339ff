"""Per-Pack settings: five groups (ranking, context, flush, rewards, tuning) and the write
limits.

Settings are stored with the Pack (``pack_meta`` table) and versioned there, so two Packs
built by the same code can be wired differently. Every default and its source (MemRL's
configs, a measurement, or a hand-set guess to tune) is listed in ``docs/settings.md``.

A setting is named by its group and key (``context.theta``), or by the flat name it had
before the groups (``context_theta``): stored Packs, ``Pack.configure`` and
``learn-bench --set`` accept all three spellings (a dotted key, a flat name, a group dict).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Self

from pydantic import Field

from packs.errors import InvalidSettings
from packs.settings.admission import AdmissionSettings
from packs.settings.base import Group
from packs.settings.groups import (
    ContextSettings,
    FlushSettings,
    RankingSettings,
    TuningSettings,
)
from packs.settings.rewards import RewardSettings

# Measured in docs/dedup.md: the threshold with the best F0.5 (precision weighted,
# because a false merge loses a memory while a missed merge only stores a near-copy).
DEFAULT_DEDUP_THRESHOLD = 0.89
# Measured in docs/corrections.md: two responses of one situation are the same fact (a
# repeat that merges) only at this response cosine or above, with no new value, negation
# or step order; best F0.5 on packs/data/corrections/response_pairs.jsonl (issue 30).
DEFAULT_CORRECTION_THRESHOLD = 0.88

GROUPS: dict[str, type[Group]] = {
    "ranking": RankingSettings,
    "context": ContextSettings,
    "flush": FlushSettings,
    "rewards": RewardSettings,
    "admission": AdmissionSettings,
    "tuning": TuningSettings,
}
# The flat names settings had before they were grouped -> (group, key).
FLAT_NAMES: dict[str, tuple[str, str]] = {
    **{name: ("ranking", name) for name in RankingSettings.model_fields},
    "alpha": ("rewards", "alpha"),
    "blame_relief": ("rewards", "blame_relief"),
    "log_flush_rows": ("flush", "rows"),
    "log_flush_seconds": ("flush", "seconds"),
    "compact_every_commits": ("flush", "compact_every_commits"),
    "version_retention_hours": ("flush", "version_retention_hours"),
    "utility_mode": ("context", "mode"),
    "context_theta": ("context", "theta"),
    "context_kappa": ("context", "kappa"),
    "context_history": ("context", "history"),
    "context_prior": ("context", "prior"),
    "context_kernel": ("context", "kernel"),
    "context_links": ("context", "links"),
    "link_margin": ("context", "link_margin"),
}


# Settings a Pack stored before they were retired, read and dropped: the link rules issue
# 29 replaced by self-tuning (a key's gap over other questions' keys, the nearest-evidence
# veto; no measured effect on any corpus, docs/tuning.md).
RETIRED: dict[str, frozenset[str]] = {
    "context": frozenset({"link_min_gap", "nearest_evidence_cos"}),
}


class PackSettings(Group):
    """Everything a Pack can be tuned with. Unknown keys are rejected."""

    _where: ClassVar[str] = "settings"

    ranking: RankingSettings = RankingSettings()  # frozen: one default shared safely
    context: ContextSettings = ContextSettings()  # frozen: one default shared safely
    flush: FlushSettings = FlushSettings()  # frozen: one default shared safely
    rewards: RewardSettings = RewardSettings()  # frozen: one default shared safely
    admission: AdmissionSettings = AdmissionSettings()  # frozen: one default shared safely
    tuning: TuningSettings = TuningSettings()  # frozen: one default shared safely
    dedup_threshold: float = Field(DEFAULT_DEDUP_THRESHOLD, ge=0.0, le=1.0)
    correction_threshold: float = Field(DEFAULT_CORRECTION_THRESHOLD, ge=0.0, le=1.0)
    max_text_chars: int = Field(20_000, ge=1, le=10_000_000)
    # remember()'s expiry when none is given (docs/forgetting.md); off unless set
    default_ttl_hours: float | None = Field(None, gt=0.0, le=24.0 * 365 * 100)

    def __init__(self, **data: Any) -> None:
        # Flat and dotted names go to their group, and each group is built on its own, so
        # a refused value is reported by the group that refused it.
        grouped = _nest(data)
        for name, model in GROUPS.items():
            if isinstance(grouped.get(name), dict):
                retired = RETIRED.get(name, frozenset())
                grouped[name] = model(
                    **{k: v for k, v in grouped[name].items() if k not in retired}
                )
        super().__init__(**grouped)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PackSettings:
        """Settings from a stored or given dict (grouped, dotted or flat names)."""
        if not isinstance(data, dict):
            raise InvalidSettings(f"Settings must be a dict, got {type(data).__name__}.")
        return cls(**data)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes``; a group dict changes only the keys it names (and a
        ``rewards.weights`` dict only the sources it names)."""
        current = self.to_dict()
        for group, values in _nest(changes).items():
            if group in GROUPS and isinstance(values, dict):
                current[group] = {**current[group], **values}
            else:
                current[group] = values
        return type(self)(**current)

    @staticmethod
    def known_names() -> set[str]:
        """Every name a setting can be given by: flat, dotted, top-level."""
        dotted = {f"{g}.{k}" for g, model in GROUPS.items() for k in model.model_fields}
        top = {k for k in PackSettings.model_fields if k not in GROUPS}
        return dotted | set(FLAT_NAMES) | top


def _nest(data: dict[str, Any]) -> dict[str, Any]:
    """``{"context_theta": 0.7, "ranking.k2": 1, "rewards": {...}}`` -> group dicts."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise InvalidSettings(f"Setting names are strings, got {key!r}.")
        group, dot, name = key.partition(".")
        if dot and group in GROUPS:
            target: tuple[str, str] | None = (group, name)
        else:
            target = FLAT_NAMES.get(key)
        if target is None:
            if key in GROUPS and isinstance(value, dict):
                out[key] = {**out.get(key, {}), **value}
            elif key in GROUPS or key in PackSettings.model_fields:
                out[key] = value
            else:
                raise InvalidSettings(
                    f"Unknown Pack setting {key!r}; known settings are "
                    f"{sorted(PackSettings.known_names())}."
                )
            continue
        group, name = target
        existing = out.setdefault(group, {})
        if not isinstance(existing, dict):
            existing = out[group] = existing.to_dict()
        existing[name] = value
    return out


@dataclass
class ActiveSettings:
    """The settings an open Pack works by now, and their stored version. Shared by the
    Pack's services, so a :meth:`Pack.configure` reaches every one of them."""

    value: PackSettings
    version: int
