"""Memories on probation, for a caller holding an open Pack (admission control, issue 30):
list them, or confirm them by hand (an operator's word counts as a confirmation, like a
repeat or a positive reward of their episode). The probation itself:
:mod:`packs.probation`; the policy: docs/admission.md."""

from __future__ import annotations

from datetime import UTC, datetime

from packs.errors import InvalidInput
from packs.pack import Pack, storage_of
from packs.probation import Probation, held_memories
from packs.records import HeldMemory
from packs.store.scopes import check_scope


def held(pack: Pack, scope: str | None = None, *, every: bool = False) -> list[HeldMemory]:
    """What waits on probation, oldest first: what ``scope`` can see (its own and the
    shared memories), or every held memory with ``every``."""
    if not pack.read_only:
        pack.flush()
    return held_memories(storage_of(pack), check_scope(scope), every=every)


def admit(pack: Pack, memory_ids: list[str]) -> list[str]:
    """Confirm held memories by hand: they join recall now. The ids that were held."""
    storage_of(pack).require_writable("confirm held memories")
    if not isinstance(memory_ids, list) or not all(isinstance(m, str) for m in memory_ids):
        raise InvalidInput(f"memory_ids must be a list of ids, got {memory_ids!r}.")
    return Probation(storage_of(pack)).confirm(memory_ids, datetime.now(UTC))
