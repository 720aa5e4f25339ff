"""Per-Pack settings, in four groups: ``ranking`` (Phase A and B), ``context`` (the
query-conditioned utility and links), ``flush`` (write buffering and compaction) and
``rewards`` (learning rates and reward wiring), plus the write limits. Defaults and their
sources: ``docs/settings.md``."""

from packs.settings.groups import ContextSettings, FlushSettings, LexicalMode, RankingSettings
from packs.settings.pack_settings import (
    DEFAULT_DEDUP_THRESHOLD,
    FLAT_NAMES,
    GROUPS,
    ActiveSettings,
    PackSettings,
)
from packs.settings.rewards import SOURCES, RewardSettings

__all__ = [
    "DEFAULT_DEDUP_THRESHOLD",
    "FLAT_NAMES",
    "GROUPS",
    "SOURCES",
    "ActiveSettings",
    "ContextSettings",
    "FlushSettings",
    "LexicalMode",
    "PackSettings",
    "RankingSettings",
    "RewardSettings",
]
