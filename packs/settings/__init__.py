"""Per-Pack settings, in five groups: ``ranking`` (Phase A and B), ``context`` (the
query-conditioned utility and links), ``flush`` (write buffering and compaction),
``rewards`` (learning rates and reward wiring) and ``tuning`` (self-tuning), plus the write
limits. Defaults and their
sources: ``docs/settings.md``."""

from packs.settings.admission import AdmissionSettings
from packs.settings.groups import (
    ContextSettings,
    FlushSettings,
    LexicalMode,
    RankingSettings,
    TuningSettings,
)
from packs.settings.pack_settings import (
    DEFAULT_CORRECTION_THRESHOLD,
    DEFAULT_DEDUP_THRESHOLD,
    FLAT_NAMES,
    GROUPS,
    ActiveSettings,
    PackSettings,
)
from packs.settings.rewards import SOURCES, RewardSettings

__all__ = [
    "DEFAULT_CORRECTION_THRESHOLD",
    "DEFAULT_DEDUP_THRESHOLD",
    "FLAT_NAMES",
    "GROUPS",
    "SOURCES",
    "ActiveSettings",
    "AdmissionSettings",
    "ContextSettings",
    "FlushSettings",
    "LexicalMode",
    "PackSettings",
    "RankingSettings",
    "RewardSettings",
    "TuningSettings",
]
