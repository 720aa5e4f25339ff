"""The Pack: a scoped, self-contained memory whose rows learn a utility from rewards.

A facade over small services, each with explicit collaborators (docs/architecture.md):
:class:`~packs.memories.MemoryWriter` (remember, add_knowledge),
:class:`~packs.recall.service.RecallService` (recall, search),
:class:`~packs.rewards.service.RewardService` (every reward source),
:class:`~packs.rewards.verdicts.VerdictService` (validate, resolve),
:class:`~packs.reads.MemoryReader` (get, count) and the write buffer's
:class:`~packs.journal.flush.Flusher`, all over one :class:`~packs.store.gateway.PackStore`.
"""

from __future__ import annotations

import atexit
import logging
import os
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack, cast

from packs.deprecation import deprecated
from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.eval_sets import EvalSets
from packs.held import ProbationService
from packs.lazy import lazy_module
from packs.lessons.service import LessonService
from packs.maturity import Maturity, measure_maturity
from packs.memory_table import MemoryTable
from packs.opening import open_store
from packs.options import (
    FeedbackOptions,
    ForgetOptions,
    RecallFilters,
    RememberOptions,
    RevisionChanges,
    RewardEventOptions,
    RewardOptions,
    ValidationOptions,
)
from packs.records import (
    FeedbackResult,
    ForgetReport,
    KnowledgeChunk,
    MemoryVersion,
    RebuildReport,
    Recall,
    RememberResult,
    ResolveResult,
    RevisionResult,
    ValidationResult,
    VoteResult,
)
from packs.rewards.kinds import Outcome, Rating, Reward, Signal
from packs.services import Served, build_services
from packs.settings import ActiveSettings, PackSettings
from packs.store import schemas
from packs.store.gateway import PackStore
from packs.store.query import versions
from packs.transfer.service import PackTransfer
from packs.tuning.service import TuningService
from packs.upkeep import Upkeep

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

log = logging.getLogger(__name__)

_CLOSE_RETRIES = 4  # a close retries a transient fault after 1, 2, 4, 8 s, then raises
_MODES = {False: "read-write", True: "read-only"}
_open_packs: weakref.WeakSet[Pack] = weakref.WeakSet()


@atexit.register
def _close_open_packs() -> None:
    """A clean interpreter exit loses nothing: flush every Pack still open."""
    for pack in list(_open_packs):
        try:
            pack.close()
        except Exception:
            log.exception("Flushing Pack %r at exit failed", pack.name)


class Pack:
    """One Pack. Create or open it with :meth:`Pack.open`."""

    def __init__(
        self,
        store: PackStore,
        settings: PackSettings,
        settings_version: int,
        embedding: EmbeddingInfo,
        embedder: EmbeddingProvider | None,
    ) -> None:
        self._store = store
        self._settings = ActiveSettings(settings, settings_version)
        self._svc = build_services(store, self._settings, embedding, embedder)  # by name
        self._closed = False
        if not store.read_only:
            _open_packs.add(self)
            self._svc.background.start()  # learning reaches other processes while idle

    @classmethod
    def open(
        cls,
        name: str,
        root: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        *,
        create: bool = True,
        embedder: EmbeddingProvider | None = None,
        settings: PackSettings | Mapping[str, Any] | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> Pack:
        """Open Pack ``name`` under ``root`` (default ``WOLFIE_ROOT`` or ``./.wolfie``),
        created unless ``read_only`` or ``create=False`` (then :class:`PackNotFound`).
        ``settings`` apply at creation, or are stored as a new settings version.
        ``embedder`` defaults to offline all-MiniLM-L6-v2; another vector space is refused.
        """
        found = open_store(
            name,
            root,
            read_only,
            create=create,
            embedder=embedder,
            settings=settings,
            storage_options=storage_options,
        )
        pack = cls(found.store, found.settings, found.settings_version, found.embedding, embedder)
        if found.requested is not None and found.requested != pack.settings:
            pack.configure(**found.requested.to_dict())
        return pack

    @property
    def name(self) -> str:
        return self._store.location.name

    @property
    def root(self) -> str:
        return self._store.location.root

    @property
    def read_only(self) -> bool:
        return self._store.read_only

    @property
    def settings(self) -> PackSettings:
        return self._settings.value

    @property
    def settings_version(self) -> int:
        return self._settings.version

    @property
    def embedding(self) -> EmbeddingInfo:
        return self._svc.embedder.info

    tuning = Served[TuningService]()  # tune, history, rollback (docs/tuning.md)
    upkeep = Served[Upkeep]()  # maintain, forget_expired, drop_all (packs/upkeep.py)
    probation = Served[ProbationService]()  # held, admit (packs/held.py)
    eval_sets = Served[EvalSets]()  # save, stored, read, add_runs, runs, pin (packs/eval_sets.py)
    lessons = Served[LessonService]()  # refresh, candidates, evidence, save
    memory_table = Served[MemoryTable]()  # page (the explorer), knowledge look-ups (ingest)
    transfer = Served[PackTransfer]()  # export, an import's writes (packs/transfer/service.py)

    def __repr__(self) -> str:
        return f"Pack(name={self.name!r}, root={self.root!r}, {_MODES[self.read_only]})"

    def configure(self, **changes: Any) -> PackSettings:
        """Store a new settings version with ``changes`` applied; unknown keys are refused."""
        return self._svc.configure(changes)

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush everything buffered; a transient fault is retried after 1, 2, 4, 8 s."""
        if self._closed:
            return
        self._svc.stop()
        if not self.read_only:
            self._svc.flusher.flush(retries=_CLOSE_RETRIES)
        self._closed = True
        _open_packs.discard(self)

    def flush(self, *, wait: bool = True) -> None:  # wait=False: on the background thread
        self._svc.flusher.flush() if wait else self._svc.flusher.flush_soon()

    # --- write path: packs/memories.py ---------------------------------------------------

    def remember(
        self,
        intent: str,
        response: str,
        outcome: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        **options: Unpack[RememberOptions],
    ) -> RememberResult:
        """Store a memory, merge a repeat, supersede what it corrects, hold or refuse it
        (``RememberOptions``: polarity, source, scope, expires_at, confidence, episode_id)."""
        return self._svc.writer.remember(intent, response, outcome, metadata, **options)

    def supersede(self, memory_id: str, by: str | None = None, reason: str | None = None) -> None:
        """Mark a memory no longer true (``by`` the one replacing it): history, not advice."""
        self._svc.writer.supersede(memory_id, by, reason)

    def forget(
        self, memory_ids: list[str] | None = None, **options: Unpack[ForgetOptions]
    ) -> ForgetReport:
        """Remove ``memory_ids``, every row of ``scope`` or what ``where`` matches, from
        every table and process (``packs/forget.py``); ``purge``: from storage too."""
        return self._svc.forget.forget(memory_ids, **options)

    def store_lessons(self, lessons: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
        """Write distilled lessons and their ``lesson_log`` rows (``packs/lessons``)."""
        self._svc.writer.store_lessons(lessons, log)

    def add_knowledge(self, chunks: Iterable[KnowledgeChunk | Mapping[str, Any]]) -> list[str]:
        """Add knowledge chunks; ids come from (source, position), so it is idempotent."""
        return self._svc.writer.add_knowledge(chunks)

    def revise(self, memory_id: str, **changes: Unpack[RevisionChanges]) -> RevisionResult:
        """Change a memory in place (same id, changed text re-embedded); a new response or
        polarity is a new action whose utility restarts (docs/rewards.md, "Revising")."""
        return self._svc.revisions.revise(memory_id, **changes)

    def history(self, memory_id: str, scope: str | None = None) -> list[MemoryVersion]:
        """Its versions, oldest first: created, merged, revised (when, what, which call);
        lessons: its own, and ``scope``'s."""
        return self._svc.history(memory_id, scope)

    # --- read path: packs/recall/service.py ----------------------------------------------

    def recall(self, query: str, k: int | None = None, **filters: Unpack[RecallFilters]) -> Recall:
        """Phase A (cosine top-k1 above δ), Phase B (z-scored blend, top-k2), logged: ``k``
        overrides k2; ``where``/``metadata``/``kind`` filter; ``scope`` sees its rows and
        the shared ones. :meth:`reward` rewards the ``episode_id``."""
        return self._svc.recall.retrieve(query, k, log_episode=True, **filters)

    def search(self, query: str, k: int | None = None, **filters: Unpack[RecallFilters]) -> Recall:
        """The same ranking as :meth:`recall`, with nothing logged (works read-only)."""
        return self._svc.recall.retrieve(query, k, log_episode=False, **filters)

    def get(self, memory_id: str) -> dict[str, Any]:  # learned columns: pending included
        return self._svc.reader.get(memory_id)

    def query(
        self,
        table: str,
        where: Mapping[str, object] | None = None,
        columns: list[str] | None = None,
        limit: int | None = None,
        version: int | None = None,
    ) -> pl.DataFrame:  # a table filtered, flushed first; version: the past (store/query.py)
        return self._svc.reader.query(table, where, columns, limit, version)

    def versions(self, table: str) -> list[dict[str, Any]]:  # for query(version=)
        return versions(self._store, table)

    def count(self, table: str = schemas.MEMORIES, kind: str | None = None) -> int:  # stored rows
        return self._svc.reader.count(table, kind)

    def reward(
        self, episode_id: str, reward: Reward, **options: Unpack[RewardOptions]
    ) -> FeedbackResult:
        """Reward ``episode_id``: a :class:`Rating`, :class:`Signal` or :class:`Outcome`."""
        return self._svc.rewards.reward(episode_id, reward, **options)

    def apply_reward(
        self, episode_id: str, value: float, **options: Unpack[RewardEventOptions]
    ) -> FeedbackResult:  # one typed event per memory: Q += alpha * w * (r - Q)
        return self._svc.rewards.apply_reward(episode_id, value, **options)

    @deprecated("Pack.feedback()", "Pack.reward(episode_id, Rating(rating) or Rating(stars=n))")
    def feedback(
        self, episode_id: str, rating: float | None = None, **options: Unpack[FeedbackOptions]
    ) -> FeedbackResult:  # deprecated, docs/rewards.md
        given = Rating(rating, options.pop("stars", None))
        return self._svc.rewards.reward(episode_id, given, **cast(RewardOptions, options))

    @deprecated("Pack.outcome()", "Pack.reward(episode_id, Outcome(amount))")
    def outcome(
        self, episode_id: str, amount: float, **options: Unpack[RewardOptions]
    ) -> FeedbackResult:  # deprecated, docs/rewards.md
        return self._svc.rewards.reward(episode_id, Outcome(amount), **options)

    @deprecated("Pack.signal()", "Pack.reward(episode_id, Signal(name, memory_ids))")
    def signal(
        self,
        episode_id: str,
        name: str,
        memory_ids: list[str] | None = None,
        **options: Unpack[RewardOptions],
    ) -> FeedbackResult:  # deprecated, docs/rewards.md
        return self._svc.rewards.reward(episode_id, Signal(name, memory_ids), **options)

    def vote(self, attempts: Mapping[str, str], **options: Unpack[RewardOptions]) -> VoteResult:
        """Majority vote over attempts ``{episode_id: answer}``; a tie rewards nobody."""
        return self._svc.rewards.vote(attempts, **options)

    def validate(
        self,
        episode_id: str,
        output: str,
        context: Mapping[str, Any] | None = None,
        **options: Unpack[ValidationOptions],
    ) -> ValidationResult:
        """Check ``output`` with the validation ``hook``; a broken hook flags, never raises."""
        return self._svc.verdicts.validate(episode_id, output, context, **options)

    def resolve(
        self,
        episode_id: str,
        response: str,
        success: bool | None = None,
        **options: Unpack[RewardOptions],
    ) -> ResolveResult:
        """Store the episode's response and score it against the past (intrinsic reward)."""
        return self._svc.verdicts.resolve(episode_id, response, success, **options)

    def reward_log(self) -> pl.DataFrame:  # the whole append-only log, flushed first
        return self._svc.rebuilds.reward_log()

    def rebuild_utilities(self, *, write: bool = True) -> RebuildReport:
        """Replay the reward log, report drift from the stored values; ``write`` stores it."""
        return self._svc.rebuilds.rebuild_utilities(write=write)

    def maturity(self, *, record: bool = False) -> Maturity:  # five signals; record: a trace
        self.flush()
        return measure_maturity(self._store, self._settings.value.rewards.alpha, record=record)
