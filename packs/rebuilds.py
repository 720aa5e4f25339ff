"""The reward log read whole, and the utilities replayed from it (``Pack.reward_log``,
``Pack.rebuild_utilities``): :mod:`packs.learning.rebuild` over an open handle, flushed
first so the log holds everything this handle buffered."""

from __future__ import annotations

import polars as pl

from packs.journal.flush import Flusher
from packs.learning import rebuild
from packs.learning.state import LearningState
from packs.records import RebuildReport
from packs.store.gateway import PackStore


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
