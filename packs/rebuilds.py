"""The reward log read whole, and the utilities replayed from it (``Pack.reward_log``,
``Pack.rebuild_utilities``): :mod:`packs.learning.rebuild` over an open handle, flushed
first so the log holds everything this handle buffered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packs.journal.flush import Flusher
from packs.lazy import lazy_module
from packs.learning import rebuild
from packs.learning.state import LearningState
from packs.records import RebuildReport
from packs.store.gateway import PackStore

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start


class RebuildService:
    def __init__(self, store: PackStore, flusher: Flusher, learning: LearningState) -> None:
        self._store, self._flusher, self._learning = store, flusher, learning

    def reward_log(self) -> pl.DataFrame:
        """The whole append-only reward log, after a flush."""
        self._flusher.flush()
        return rebuild.reward_log(self._store)

    def rebuild_utilities(self, *, write: bool = True) -> RebuildReport:
        """Replay the reward log, report drift from the stored values; ``write`` stores it."""
        report = rebuild.rebuild_utilities(self._store, self.reward_log(), write=write)
        if write and report.changed:
            self._learning.forget_stored()
        return report
