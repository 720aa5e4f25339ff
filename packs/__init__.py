"""Wolfie's Pack engine: pure ranking and reward math plus LanceDB storage.

``packs`` never imports Prefect; flows and tasks wrap it.
"""

from packs.errors import WolfieError
from packs.pack import Pack
from packs.records import FeedbackResult, KnowledgeChunk, Recall, RecalledItem, RememberResult
from packs.settings import PackSettings

__all__ = [
    "FeedbackResult",
    "KnowledgeChunk",
    "Pack",
    "PackSettings",
    "Recall",
    "RecalledItem",
    "RememberResult",
    "WolfieError",
]
