"""Flushing the write buffer: log tables first, then the learned state they explain.

Everything on the hot path (a recall, a reward) goes to a :class:`WriteBuffer` first and
is written in batches here; a failed write keeps its rows buffered for the next flush,
a row the table refuses on its own is isolated and dropped (``UnwritableRows``), and
tables committed to often are compacted. What a crash may lose: docs/durability.md.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from packs.errors import PackNotFound, TransientError, UnwritableRows, WolfieError
from packs.events import EngineEvents
from packs.journal.forgotten import ForgetWatch
from packs.journal.write_buffer import RefusedRow, WriteBuffer, to_tables
from packs.learning.state import LearningState, Pending
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)

# Hand-set: how long Pack.flush(wait=False) may wait, so that a burst of calls (the MCP
# server's recalls, issue 24) shares one flush instead of each holding the handle's lock
# for one; well inside a writer's 1 s view of other processes' commits.
SOON_S = 0.25

# The key (or keys) that name a buffered row in logs, per table.
_ROW_KEYS: dict[str, tuple[str, ...]] = {
    schemas.EPISODES: ("id",),
    schemas.EPISODE_OUTCOMES: ("id",),
    schemas.RETRIEVAL_LOG: ("episode_id", "item_id"),
    schemas.REWARD_EVENTS: ("event_id",),
    schemas.VALIDATIONS: ("episode_id", "hook"),
    schemas.MEMORY_HISTORY: ("version_id",),
}
_IDEMPOTENT_KEYS: dict[str, str | list[str]] = {
    schemas.EPISODES: "id",
    schemas.RETRIEVAL_LOG: ["episode_id", "item_id"],
    schemas.REWARD_EVENTS: "event_id",
    schemas.MEMORY_HISTORY: "version_id",
}


def _refused_data(exc: BaseException) -> bool:
    """An error about the rows themselves (Arrow could not convert or cast them, text is
    no valid UTF-8, Lance's vector checks refused them), as opposed to storage, commits
    or files: only these are worth isolating row by row."""
    return isinstance(exc, pa.ArrowException | UnicodeError) or "arrow" in str(exc).lower()


def _reject(name: str, row: dict[str, Any], reason: BaseException, rejected: list[str]) -> None:
    key = "/".join(str(row.get(k)) for k in _ROW_KEYS.get(name, ()))
    key = key.encode("utf-8", "backslashreplace").decode("utf-8")  # printable, whatever it held
    log.error("Dropped a %s row %s that the table refused: %s", name, key, reason)
    rejected.append(f"{name}:{key}")


class Flusher:
    """Writes one handle's buffer to its Pack, under the handle's ``lock``."""

    def __init__(
        self,
        store: PackStore,
        buffer: WriteBuffer,
        learning: LearningState,
        settings: ActiveSettings,
        lock: threading.RLock,
        dim: int,
        forgets: ForgetWatch,
        events: EngineEvents,
    ) -> None:
        self._store = store
        # Announces what a flush does (packs/events.py): a flush wanted off the caller's
        # path (the background thread takes it), writing, landed or failed (the recall
        # cache holds while it writes and catches up after it, off the query path).
        self._events = events
        self._forgets = forgets  # other handles' forgets leave the buffer before a write
        self._buffer = buffer
        self._learning = learning
        self._settings = settings  # compaction policy: compact_every_commits, retention
        self._lock = lock
        self._schemas = schemas.buffer_schemas(dim)
        self._commits: dict[str, int] = {}
        self._failures = 0
        self._retry_after = 0.0
        # Held by the flush writing (without the handle's lock): one at a time.
        self._writing = threading.Lock()
        self._soon = False  # flush_soon asked the background thread for a flush

    def idle(self) -> bool:
        """Nothing buffered."""
        return self._buffer.empty() and not self._learning.pending_count()

    def _due(self) -> bool:
        return self._buffer.due(self._learning.pending_count())

    def flush(self, *, retries: int = 0) -> None:
        """Flush; a transient storage fault is retried ``retries`` times with backoff
        (1, 2, 4, ... s) before it is raised."""
        for attempt in range(retries + 1):
            try:
                self._flush()
                return
            except TransientError:
                if attempt == retries:
                    raise
                time.sleep(2.0**attempt)

    def _flush(self) -> None:
        """Write buffered episodes, retrieval logs, reward events and learned state now.

        The reward log is written before the utilities it explains, so a crash between
        the two leaves utilities that ``rebuild_utilities`` restores from the log.
        Whatever a failed write had not stored stays taken, for the next flush to write
        first. The commits run without the handle's lock, so a recall never waits for
        them (docs/recall.md): the rows and steps taken stay visible until they land.
        """
        with self._lock:
            if self.idle():
                return
            if self._store.deleted():
                self._drop_for_deleted_pack()
        self._forgets.poll(fresh=True)  # no row of a forget made before now is written
        taken = self._take()
        if taken is None:
            return
        rows, learned = taken
        try:
            self._write(rows, learned)
        finally:
            self._writing.release()

    def _take(self) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Pending]] | None:
        """Hold the writing lock and take what is buffered, under the handle's lock; None
        when nothing is. Waits for a flush that is writing without holding the handle's
        lock (deadlock-free: a flush writing never waits for it)."""
        while True:
            with self._lock:
                if self.idle():
                    return None
                if self._writing.acquire(blocking=False):
                    self._events.flush_writing.emit()
                    return self._buffer.drain(), self._learning.drain()
            with self._writing:  # another flush is writing: wait for it, then look again
                pass

    def _write(self, taken: dict[str, list[dict[str, Any]]], learned: dict[str, Pending]) -> None:
        refused: list[RefusedRow] = []
        rejected: list[str] = []
        try:
            tables = to_tables(taken, self._schemas, refused)
            for name, row, reason in refused:  # rows no table could hold: never retried
                _reject(name, row, reason, rejected)
            before = self._store.committed_version(schemas.REWARD_EVENTS)
            self._write_logs(tables, rejected)
            if learned:  # the log first: the learned state it explains after it
                logged = self._store.committed_version(schemas.REWARD_EVENTS) != before
                self._learning.write(learned, self._count_commit, logged=logged)
        except BaseException:
            self._buffer.failed()
            self._events.flush_failed.emit()  # searches catch up as before
            raise
        try:
            self._compact_due_tables()  # first: its renumbered rows reach the cache too
        finally:
            self._land()
        if rejected:
            raise UnwritableRows(
                f"Pack {self._store.location.name!r} refused {len(rejected)} buffered "
                f"row(s), which were dropped (the rest were written): {rejected[:10]}. "
                "Each is logged at ERROR with the reason."
            )

    def _land(self) -> None:
        """What the flush wrote is read for the recall cache (``flush_landed``, without
        the handle's lock: a flush writing never waits for it, so any caller holding it
        may wait for the flush), handed over for the next recall to bring in before it
        ranks, and then the steps it took stop being applied on top (a recall in between
        finds the row already holding them: ``LearningState``'s landing guard)."""
        self._events.flush_landed.emit()
        self._learning.landed()

    def flush_soon(self) -> None:
        """Flush on the background thread within :data:`SOON_S` when one runs (the calls
        of that window share the flush), else now."""
        self._soon = True
        if not self._events.flush_wanted.ask(SOON_S):
            self._soon = False
            self.flush()

    def maybe_flush(self, *, here: bool = False, due: bool | None = None) -> None:
        """Flush if due: on the background thread when one runs (unless ``here``) and
        fewer than twice ``flush_rows`` rows wait or a flush is writing already, else
        now. On the hot path a transient storage fault does not raise: the rows stay
        buffered and the next due flush, ``flush()`` or ``close()`` retries.

        In durable mode (``log_flush_rows=1``) every fault raises, so a call never
        returns as if stored when its commit failed; its rows stay buffered, and the
        same call again (same idempotency key) retries the write.
        """
        if not (self._due() if due is None else due):
            return
        if self._buffer.flush_rows <= 1:
            self.flush()
            return
        pending = self._buffer.row_count(self._learning.pending_count())
        soon = pending < 2 * self._buffer.flush_rows or self._writing.locked()
        if not here and soon and self._events.flush_wanted.ask(0.0):
            return
        if time.monotonic() < self._retry_after:
            return
        try:
            self.flush()
        except TransientError as exc:
            self._failures += 1
            self._retry_after = time.monotonic() + min(60.0, 2.0**self._failures)
            kept = self._buffer.row_count(self._learning.pending_count())
            log.warning("Flush deferred (%s); %d buffered rows kept", exc, kept)
        except UnwritableRows:
            # Logged row by row; the call that happened to flush is not the one at fault.
            self._failures, self._retry_after = 0, 0.0
        else:
            self._failures, self._retry_after = 0, 0.0

    def flush_if_due(self) -> None:
        """The background flusher's call: what a call would have flushed had one come.
        It flushes without the handle's lock: recalls go on meanwhile."""
        with self._lock:
            soon, self._soon = self._soon, False
            due = soon or self._due()
        if due:
            self.maybe_flush(here=True, due=True)

    def _drop_for_deleted_pack(self) -> None:
        """The Pack's folder was deleted under this handle: writing would recreate half
        a Pack (log tables with no ``pack_meta``), so the buffered rows are dropped."""
        count = self._buffer.row_count(self._learning.pending_count())
        with self._writing:
            self._buffer.drain()
            self._learning.drain()
            self._buffer.landed_all()
            self._learning.landed()
        location = self._store.location
        log.error(
            "Pack %r at %r was deleted while open; dropping %d buffered rows instead of "
            "recreating it",
            location.name,
            location.root,
            count,
        )
        raise PackNotFound(
            f"Pack {location.name!r} under {location.root!r} was deleted while open; its "
            f"{count} buffered rows were dropped rather than recreate half a Pack."
        )

    def _write_logs(self, tables: dict[str, pa.Table], rejected: list[str]) -> None:
        """Write each pending log table; remove it from ``tables`` once stored. Rows the
        table refuses on their own are dropped and named in ``rejected``."""
        order = (
            schemas.EPISODES,
            schemas.EPISODE_OUTCOMES,
            schemas.RETRIEVAL_LOG,
            schemas.REWARD_EVENTS,
            schemas.VALIDATIONS,
            schemas.MEMORY_HISTORY,
        )
        for name in order:
            if name in tables:
                self._write_isolating(name, tables, rejected)
                self._buffer.retried.discard(name)
                self._buffer.landed(name)
                del tables[name]

    def _write_isolating(self, name: str, tables: dict[str, pa.Table], rejected: list[str]) -> None:
        """Write ``tables[name]``; if the table refuses the data itself (not a storage
        fault), split it in halves until the refused rows stand alone, write the rest,
        and drop those rows, so one bad row never blocks the rows buffered after it.

        Only Arrow's refusals (a cast, a NaN vector) are taken for bad rows. Storage
        faults, transient or permanent, and anything else raise with the unwritten rows
        left in ``tables[name]`` for the buffer to keep.
        """
        pending = [tables[name]]
        refused: list[tuple[dict[str, Any], BaseException]] = []
        while pending:
            part = pending[0]
            try:
                self._write_table(name, part)
            except BaseException as exc:
                if isinstance(exc, WolfieError | OSError) or not _refused_data(exc):
                    # a storage fault, transient or not: keep every unwritten row
                    self._buffer.unwritten(name, pa.concat_tables(pending).to_pylist())
                    raise
                self._buffer.retried.add(name)  # from here on, write each row once by key
                if part.num_rows > 1:
                    half = part.num_rows // 2
                    pending[:1] = [part.slice(0, half), part.slice(half)]
                    continue
                refused.append((part.to_pylist()[0], exc))
            pending.pop(0)
        for row, reason in refused:
            _reject(name, row, reason, rejected)

    def _write_table(self, name: str, data: pa.Table) -> None:
        if name == schemas.REWARD_EVENTS and self._buffer.keyed:
            ids = data.column("event_id").to_pylist()
            keyed = pa.array([event_id in self._buffer.keyed for event_id in ids])
            if pc.any(keyed).as_py():
                # a key another process may have received too: stored once, by event id,
                # matched against the latest commit (not this handle's cached view)
                self._store.latest_version(name)
                self._store.merge(name, data.filter(keyed), "event_id")
                self._count_commit(name)
                data = data.filter(pc.invert(keyed))
                self._buffer.keyed.difference_update(ids)
                if not data.num_rows:
                    return
        if name == schemas.EPISODE_OUTCOMES:
            self._store.merge(schemas.EPISODES, data, "id", update=True, insert=False)
        elif name in _IDEMPOTENT_KEYS and name in self._buffer.retried:
            # the failed attempt may have committed: write each row once by its key
            self._store.merge(name, data, _IDEMPOTENT_KEYS[name])
        else:  # appends stay cheap as tables grow (merge_insert joins the whole key)
            self._store.append(name, data)
        self._count_commit(schemas.EPISODES if name == schemas.EPISODE_OUTCOMES else name)

    def _count_commit(self, name: str) -> None:
        self._commits[name] = self._commits.get(name, 0) + 1

    def _compact_due_tables(self) -> None:
        """Merge small fragments of tables this journal has committed to often."""
        for name, count in list(self._commits.items()):
            settings = self._settings.value
            if count < settings.flush.compact_every_commits:
                continue
            try:
                retention = timedelta(hours=settings.flush.version_retention_hours)
                self._store.optimize(name, retention)
                self._commits[name] = 0
            except (OSError, RuntimeError) as exc:  # a concurrent commit: try next time
                log.warning("Compaction of %s deferred: %s", name, exc)
