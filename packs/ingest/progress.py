"""In-process progress events of ingestion steps, for whoever listens (the CLI's bars).

Steps report a fraction done; :func:`publish` hands it to every listener registered
with :func:`listening`. Listeners run in the reporting thread and must be quick. Events
raised in another process (a Dask worker) stay there: the Prefect progress artifact is
the view that works everywhere.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

STEPS = ("download", "transcribe", "chunk", "upsert")
# Share of an item's bar each step fills (transcription dominates; hand-set).
STEP_SPAN = {
    "download": (0.0, 0.1),
    "transcribe": (0.1, 0.9),
    "chunk": (0.9, 0.92),
    "upsert": (0.92, 1.0),
}


@dataclass(frozen=True)
class ProgressEvent:
    source: str  # the item as the caller gave it
    step: str
    fraction: float  # of this step, 0..1
    detail: str = ""

    @property
    def overall(self) -> float:
        """The item's progress over all steps, 0..1."""
        low, high = STEP_SPAN.get(self.step, (0.0, 1.0))
        return low + (high - low) * min(1.0, max(0.0, self.fraction))


Listener = Callable[[ProgressEvent], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def publish(event: ProgressEvent) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # a broken display must not fail an ingestion
            log.exception("Progress listener failed on %r", event)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Call ``listener`` with every event published in this process while in the block."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)
