"""Wolfie's Pack engine: pure ranking and reward math plus LanceDB storage.

``packs`` never imports Prefect; flows and tasks wrap it. The names below load on first
use (``packs/lazy.py``), so ``import packs.errors`` or ``wolfie --help`` does not pay
for LanceDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packs.lazy import lazy_exports

if TYPE_CHECKING:
    from packs.errors import WolfieError
    from packs.pack import Pack
    from packs.records import FeedbackResult, KnowledgeChunk, Recall, RecalledItem, RememberResult
    from packs.rewards.kinds import Outcome, Rating, Signal
    from packs.settings import PackSettings

__all__ = [
    "FeedbackResult",
    "KnowledgeChunk",
    "Outcome",
    "Pack",
    "PackSettings",
    "Rating",
    "Recall",
    "RecalledItem",
    "RememberResult",
    "Signal",
    "WolfieError",
]

_RECORDS = ("FeedbackResult", "KnowledgeChunk", "Recall", "RecalledItem", "RememberResult")
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(_RECORDS, "packs.records"),
        "Pack": "packs.pack",
        "PackSettings": "packs.settings",
        **dict.fromkeys(("Outcome", "Rating", "Signal"), "packs.rewards.kinds"),
        "WolfieError": "packs.errors",
    },
    globals(),
)
