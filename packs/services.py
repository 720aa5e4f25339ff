"""The services one open Pack is built from, wired with their collaborators.

Each service gets what it works with, and nothing else: the storage gateway, the
settings in force, the write buffer's parts, one lock per handle (docs/architecture.md).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar, overload

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.pack_embedder import PackEmbedder
from packs.eval_sets import EvalSets
from packs.events import EngineEvents
from packs.forget import ForgetService
from packs.held import ProbationService
from packs.history import MemoryHistory
from packs.journal.background_flush import BackgroundFlush
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.journal.forgotten import ForgetWatch
from packs.journal.write_buffer import WriteBuffer
from packs.learning.state import LearningState
from packs.lessons.service import LessonService
from packs.memories import MemoryWriter
from packs.memory_table import MemoryTable
from packs.opening import store_settings
from packs.probation import Probation
from packs.reads import MemoryReader
from packs.rebuilds import RebuildService
from packs.recall.service import RecallService
from packs.revisions import RevisionService
from packs.rewards.idempotency import IdempotencyKeys
from packs.rewards.ledger import RewardLedger
from packs.rewards.service import RewardService
from packs.rewards.verdicts import VerdictService
from packs.settings import ActiveSettings, PackSettings
from packs.store.gateway import PackStore
from packs.transfer.service import PackTransfer
from packs.tuning.service import TuningService
from packs.upkeep import Upkeep

S = TypeVar("S")


class Served(Generic[S]):
    """A Pack's public accessor of one of its services, by the service's name in
    :class:`PackServices`: ``upkeep = Served[Upkeep]()`` in the facade gives
    ``pack.upkeep``, the handle's one :class:`~packs.upkeep.Upkeep` (one line a service)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, pack: None, owner: type) -> Served[S]: ...
    @overload
    def __get__(self, pack: object, owner: type) -> S: ...
    def __get__(self, pack: object, owner: type) -> S | Served[S]:
        if pack is None:
            return self
        service: S = getattr(pack._svc, self.name)  # type: ignore[attr-defined]
        return service


class PackServices(NamedTuple):
    embedder: PackEmbedder
    flusher: Flusher
    learning: LearningState
    writer: MemoryWriter
    reader: MemoryReader
    recall: RecallService
    rewards: RewardService
    verdicts: VerdictService
    forget: ForgetService
    revisions: RevisionService
    history: MemoryHistory
    configure: Callable[[Mapping[str, Any]], PackSettings]  # a new settings version
    rebuilds: RebuildService  # the reward log, utilities replayed from it
    tuning: TuningService  # fits the Pack's settings to its episodes (docs/tuning.md)
    background: BackgroundFlush  # flushes an idle writable handle (docs/durability.md)
    upkeep: Upkeep  # expiry, purge, compaction: maintain-pack (packs/upkeep.py)
    probation: ProbationService  # held memories listed and admitted (packs/held.py)
    eval_sets: EvalSets  # eval sets and runs kept with the Pack, the pin (packs/eval_sets.py)
    lessons: LessonService  # the refresh, one memory's lesson (packs/lessons/service.py)
    memory_table: MemoryTable  # the explorer's page, ingest's look-ups (packs/memory_table.py)
    transfer: PackTransfer  # export, an import's writes (packs/transfer/service.py)

    def stop(self) -> None:
        """Stop the handle's threads: the background flush, and a purge still queued
        (its forgets stay pending for the next purge or maintain-pack)."""
        self.background.stop()
        self.forget.purges.stop()


def build_services(
    store: PackStore,
    settings: ActiveSettings,
    embedding: EmbeddingInfo,
    provider: EmbeddingProvider | None,
) -> PackServices:
    s = settings.value
    embedder = PackEmbedder(embedding, provider)
    lock = threading.RLock()  # one handle's buffer, caches and writes
    buffer = WriteBuffer(s.flush.rows, s.flush.seconds)
    writer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    events = EngineEvents()  # announced and heard by the services below (packs/events.py)
    learning = LearningState(store, embedding.dim, s.context, writer)
    episodes = EpisodeLog(store, buffer, learning)
    forgets = ForgetWatch(store, buffer, learning, episodes, lock)  # other handles' forgets
    keys = IdempotencyKeys(store, buffer)
    flusher = Flusher(store, buffer, learning, settings, lock, embedding.dim, forgets, events)
    ledger = RewardLedger(buffer, learning, keys, writer)
    rewards = RewardService(
        store,
        settings,
        episodes,
        keys,
        ledger,
        flusher,
        lock,
        events,
    )
    events.episode_confirmed.connect(Probation(store).confirm_episode)  # admission control

    def work_by(s: PackSettings) -> None:
        """Hand the buffer and the context index the settings they work by (at open and on
        every change); the flusher reads its compaction policy from the settings."""
        buffer.flush_rows, buffer.flush_seconds = s.flush.rows, s.flush.seconds
        learning.context.use_rule(s.context)

    work_by(s)

    def configure(changes: Mapping[str, Any]) -> PackSettings:
        return store_settings(store, settings, changes, work_by)

    # hears reward_landed: an automatic tune when one is due
    tuning = TuningService(store, settings, embedding.dim, configure, writer, lock, flusher, events)
    history = MemoryHistory(store)
    # hears flush_wanted: a due flush leaves the caller's path
    background = BackgroundFlush(flusher.flush_if_due, lambda: buffer.flush_seconds, events)
    # hears flush_writing, flush_landed and flush_failed: its cache follows the flushes
    recall = RecallService(
        store, settings, embedder, learning, episodes, flusher, lock, forgets, events
    )
    forget = ForgetService(store, settings, flusher, forgets, lock)
    memories = MemoryWriter(store, settings, embedder, lock)
    rebuilds = RebuildService(store, flusher, learning)
    return PackServices(
        embedder=embedder,
        flusher=flusher,
        learning=learning,
        writer=memories,
        reader=MemoryReader(store, learning, flusher),
        recall=recall,
        forget=forget,
        rewards=rewards,
        verdicts=VerdictService(
            store, settings, embedder, episodes, buffer, rewards, flusher, lock
        ),
        revisions=RevisionService(
            store, settings, embedder, learning, ledger, buffer, flusher, history, lock
        ),
        history=history,
        configure=configure,
        rebuilds=rebuilds,
        tuning=tuning,
        background=background,
        upkeep=Upkeep(store, settings, flusher, forget),
        probation=ProbationService(store, flusher),
        eval_sets=EvalSets(store),
        lessons=LessonService(store, flusher, memories, rebuilds),
        memory_table=MemoryTable(store, flusher),
        transfer=PackTransfer(store, flusher, embedding),
    )
