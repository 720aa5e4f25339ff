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
from typing import Any, NamedTuple

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.pack_embedder import PackEmbedder
from packs.events import EngineEvents
from packs.forget import ForgetService
from packs.history import MemoryHistory
from packs.journal.background_flush import BackgroundFlush
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.journal.forgotten import ForgetWatch
from packs.journal.write_buffer import WriteBuffer
from packs.learning.state import LearningState
from packs.memories import MemoryWriter
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
from packs.tuning.service import TuningService


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
    return PackServices(
        embedder=embedder,
        flusher=flusher,
        learning=learning,
        writer=MemoryWriter(store, settings, embedder, lock),
        reader=MemoryReader(store, learning),
        recall=recall,
        forget=ForgetService(store, settings, flusher, forgets, lock),
        rewards=rewards,
        verdicts=VerdictService(
            store, settings, embedder, episodes, buffer, rewards, flusher, lock
        ),
        revisions=RevisionService(
            store, settings, embedder, learning, ledger, buffer, flusher, history, lock
        ),
        history=history,
        configure=configure,
        rebuilds=RebuildService(store, flusher, learning),
        tuning=tuning,
        background=background,
    )
