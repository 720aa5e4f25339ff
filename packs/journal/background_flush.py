"""Flushing an idle handle's buffer in the background.

Rewards and episodes are buffered and flushed when the buffer is due (``log_flush_rows``
rows or ``log_flush_seconds`` seconds), but "due" used to be checked only on the next
call: a worker that punished a memory and then sat idle kept its learning to itself
until it closed. A daemon thread per writable handle looks every flush window and
flushes what is due, so learning reaches every other process within about
``log_flush_seconds`` plus the storage layer's read consistency (docs/durability.md).

It is also woken when a call finds the buffer due (:meth:`wake`), so that call returns
without the flush's commits (about 100 ms at 10k rows, the slowest 5 % of recalls before,
docs/recall.md).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from packs.events import EngineEvents

log = logging.getLogger(__name__)

MIN_PERIOD_S = 0.5  # hand-set: never spin faster than this, whatever the settings say


class BackgroundFlush:
    """Calls ``flush_if_due`` every ``period()`` seconds until stopped, and within the
    delay asked whenever the handle's ``flush_wanted`` is asked (packs/events.py)."""

    def __init__(
        self, flush_if_due: Callable[[], None], period: Callable[[], float], events: EngineEvents
    ) -> None:
        self._flush_if_due = flush_if_due
        self._period = period
        self._stop = threading.Event()
        self._woken = threading.Event()
        self._due_at: float | None = None  # time.monotonic() a requested flush is due at
        self._thread: threading.Thread | None = None
        events.flush_wanted.connect(self.wake)  # a due flush leaves the caller's path

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="wolfie-flush", daemon=True)
            self._thread.start()

    def wake(self, delay: float = 0.0) -> bool:
        """Flush on the background thread within ``delay`` seconds (requests within that
        window share one flush); False when the thread is not running."""
        if self._thread is None or self._stop.is_set():
            return False
        due = time.monotonic() + delay
        self._due_at = due if self._due_at is None else min(self._due_at, due)
        self._woken.set()
        return True

    def stop(self) -> None:
        self._stop.set()
        self._woken.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            wait = max(MIN_PERIOD_S, self._period())
            if self._due_at is not None:
                wait = min(wait, max(0.0, self._due_at - time.monotonic()))
            self._woken.wait(wait)
            self._woken.clear()
            if self._stop.is_set():
                return
            if self._due_at is not None:
                if time.monotonic() < self._due_at:
                    continue  # a request not yet due: wait on
                self._due_at = None
            try:
                self._flush_if_due()
            except Exception as exc:  # noqa: BLE001 - a background thread must not die
                # The rows stay buffered (or were dropped and logged for a deleted
                # Pack); the next call, flush() or close() raises what still fails.
                log.warning("Background flush failed: %s", exc)
