"""The engine's events, declared in one place (llm's ``hookspecs.py`` is the model).

One :class:`EngineEvents` per open handle, built in ``packs/services.py`` and handed to
the constructor of every service that announces or hears one. A service that announces
an event emits it; a service that acts on it connects its own method in its constructor
(or services.py connects it, for ``Probation``, which other modules build on their own).
Nothing is patched onto a service after it is built, and no service hands another a
callback: a lower layer (the journal) reaches a higher one (recall, tuning) only
through an event declared here.

=================  ==========================  ==========================================
event              emitted by                  heard by
=================  ==========================  ==========================================
reward_landed()    RewardService, after a      TuningService.rewarded: an automatic tune
                   reward, outside the lock    when one is due (docs/tuning.md)
episode_confirmed  RewardService, a positive   Probation.confirm_episode: the memories
 (episode, at)     reward under the Pack's     held from the episode are stored for good
                   admission policy            (docs/admission.md)
flush_wanted(s)    Flusher, a due flush or     BackgroundFlush.wake: the flush runs on
 -> bool           ``flush(wait=False)``       the background thread within ``s``
                                               seconds; False (no thread): the caller
                                               flushes itself
flush_writing()    Flusher, as a flush takes   RecallService.hold: searches use the
                   the buffer                  vector cache as it is while it writes
flush_landed()     Flusher, the flush wrote    RecallService.landed: reads what it wrote
                                               (without the handle's lock), for the next
                                               recall to bring in (recall/cache_sync.py)
flush_failed()     Flusher, the write failed   RecallService.failed: searches catch up
                                               as before
=================  ==========================  ==========================================

Listeners run in the order they connected, on the emitter's thread; an exception in one
propagates to the emitter, as the direct call it replaces did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class _Hook(Generic[P, R]):
    """A named list of listeners, called in the order they connected."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._listeners: list[Callable[P, R]] = []

    def connect(self, listener: Callable[P, R]) -> None:
        self._listeners.append(listener)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {len(self._listeners)} listener(s))"


class Event(_Hook[P, object]):
    """Something that happened: every listener hears it."""

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for listener in self._listeners:
            listener(*args, **kwargs)


class Request(_Hook[P, bool]):
    """Something asked of whoever can do it: listeners are asked in turn until one says
    it took it (pluggy's ``firstresult``); False when none did."""

    def ask(self, *args: P.args, **kwargs: P.kwargs) -> bool:
        return any(listener(*args, **kwargs) for listener in self._listeners)


@dataclass(frozen=True)
class EngineEvents:
    """The events of one open handle (the table in the module docstring)."""

    reward_landed: Event[[]] = field(default_factory=lambda: Event("reward_landed"))
    episode_confirmed: Event[[str, datetime]] = field(
        default_factory=lambda: Event("episode_confirmed")
    )
    flush_wanted: Request[[float]] = field(default_factory=lambda: Request("flush_wanted"))
    flush_writing: Event[[]] = field(default_factory=lambda: Event("flush_writing"))
    flush_landed: Event[[]] = field(default_factory=lambda: Event("flush_landed"))
    flush_failed: Event[[]] = field(default_factory=lambda: Event("flush_failed"))
