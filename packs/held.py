"""Memories on probation, for a caller holding an open Pack (admission control, issue 30):
list them, or confirm them by hand (an operator's word counts as a confirmation, like a
repeat or a positive reward of their episode). Reached as ``pack.probation``
(:class:`ProbationService`, built in ``packs/services.py``). The probation itself:
:mod:`packs.probation`; the policy: docs/admission.md."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from packs.deprecation import moved
from packs.errors import InvalidInput
from packs.journal.flush import Flusher
from packs.probation import Probation, held_memories
from packs.records import HeldMemory
from packs.store.gateway import PackStore
from packs.store.scopes import check_scope


class ProbationService:
    """Lists the held memories and confirms them by hand."""

    def __init__(self, store: PackStore, flusher: Flusher) -> None:
        self._store = store
        self._flusher = flusher

    def held(self, scope: str | None = None, *, every: bool = False) -> list[HeldMemory]:
        """What waits on probation, oldest first: what ``scope`` can see (its own and the
        shared memories), or every held memory with ``every``."""
        if not self._store.read_only:
            self._flusher.flush()
        return held_memories(self._store, check_scope(scope), every=every)

    def admit(self, memory_ids: list[str]) -> list[str]:
        """Confirm held memories by hand: they join recall now. The ids that were held."""
        self._store.require_writable("confirm held memories")
        if not isinstance(memory_ids, list) or not all(isinstance(m, str) for m in memory_ids):
            raise InvalidInput(f"memory_ids must be a list of ids, got {memory_ids!r}.")
        return Probation(self._store).confirm(memory_ids, datetime.now(UTC))


class _Kept(Protocol):  # an open Pack, as the deprecated functions below take it
    @property
    def probation(self) -> ProbationService: ...


def held(pack: _Kept, scope: str | None = None, *, every: bool = False) -> list[HeldMemory]:
    """Deprecated: ``pack.probation.held(scope, every=every)``."""
    moved("packs.held.held(pack)", "pack.probation.held()")
    return pack.probation.held(scope, every=every)


def admit(pack: _Kept, memory_ids: list[str]) -> list[str]:
    """Deprecated: ``pack.probation.admit(memory_ids)``."""
    moved("packs.held.admit(pack)", "pack.probation.admit()")
    return pack.probation.admit(memory_ids)
