"""Expiry, staleness and probation in ``where`` clauses: a memory past its ``expires_at``
is never recalled or searched, one with ``superseded_at`` set is history, not advice
(docs/forgetting.md), one with ``held_at`` set waits on probation (docs/admission.md).
A Pack older than schema 2 (or 4) lacks the columns: opened writable it is migrated
first (packs/store/migrate.py), opened read-only it is read as it is. So the clauses the
rest of the engine filters by are made here, from the columns the Pack has: no code
outside ``packs/store`` asks which schema it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from packs.errors import InvalidInput
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.validation import utc_instant

EXPIRES = "expires_at"
SUPERSEDED = "superseded_at"
NOT_SUPERSEDED = f"{SUPERSEDED} IS NULL"
# Schema 4: a memory on probation (admission control, issue 30) is not recalled yet.
HELD = "held_at"
NOT_HELD = f"{HELD} IS NULL"


def has_lifecycle(store: PackStore) -> bool:
    """Whether the Pack's ``memories`` carry the lifecycle columns (schema 2)."""
    return store.has_column(schemas.MEMORIES, SUPERSEDED)


def has_admission(store: PackStore) -> bool:
    """Whether the Pack's ``memories`` carry the admission columns (schema 4)."""
    return store.has_column(schemas.MEMORIES, HELD)


def advice_clause(store: PackStore) -> str:
    """The memories recall and search may offer: not superseded (history, not advice) and
    not on probation (waiting for its confirmation)."""
    parts = ([NOT_SUPERSEDED] if has_lifecycle(store) else []) + (
        [NOT_HELD] if has_admission(store) else []
    )
    return " AND ".join(parts) or "TRUE"


def expiry_clock(store: PackStore) -> datetime | None:
    """Now, for the expiry checks of a recall; None for a Pack without ``expires_at`` (a
    schema-1 Pack read as it is): nothing there expires."""
    return datetime.now(UTC) if has_lifecycle(store) else None


def held_clause(store: PackStore) -> str:
    """The memories on probation (none on a Pack older than schema 4, read as it is)."""
    return f"{HELD} IS NOT NULL" if has_admission(store) else "FALSE"


def status_clause(store: PackStore, status: str, now: datetime) -> str:
    """The memories of ``status`` at ``now``: ``held``, ``superseded``, ``expired`` or
    (anything else) current: none of these."""
    lifecycle = has_lifecycle(store)
    if status == "held":
        return held_clause(store)
    if status == "superseded":
        return f"{SUPERSEDED} IS NOT NULL" if lifecycle else "FALSE"
    if status == "expired":
        return expired_clause(now) if lifecycle else "FALSE"
    unexpired = unexpired_clause(now) if lifecycle else "TRUE"
    return f"{unexpired} AND {advice_clause(store)}"


def superseded_by_clause(store: PackStore, memory_id: str) -> str:
    """The memories ``memory_id`` superseded (none on a Pack older than schema 2)."""
    return f"superseded_by = {sql_literal(memory_id)}" if has_lifecycle(store) else "FALSE"


def marks_of(store: PackStore, columns: Sequence[str]) -> list[str]:
    """Those of ``columns`` of ``memories`` the Pack has (one older than schema 2 or 4,
    read as it is, lacks the lifecycle or admission ones)."""
    return [c for c in columns if store.has_column(schemas.MEMORIES, c)]


def timestamp_literal(at: datetime) -> str:
    """``at`` as a SQL timestamp literal in UTC, to the microsecond."""
    return f"timestamp {sql_literal(at.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f'))}"


def unexpired_clause(now: datetime) -> str:
    """Rows that have not expired at ``now``."""
    return f"({EXPIRES} IS NULL OR {EXPIRES} > {timestamp_literal(now)})"


def expired_clause(now: datetime) -> str:
    """Rows that expired at or before ``now`` (what maintenance forgets)."""
    return f"({EXPIRES} IS NOT NULL AND {EXPIRES} <= {timestamp_literal(now)})"


def expiry(expires_at: object, default_ttl_hours: float | None, now: datetime) -> datetime | None:
    """When a memory remembered at ``now`` expires: ``expires_at`` (a timezone-aware
    datetime after ``now``), else ``now`` plus the Pack's default TTL, else never."""
    if expires_at is None:
        return None if default_ttl_hours is None else now + timedelta(hours=default_ttl_hours)
    if not isinstance(expires_at, datetime):
        raise InvalidInput(
            f"expires_at must be a datetime, got {type(expires_at).__name__}; pass e.g. "
            "datetime.now(UTC) + timedelta(days=30)."
        )
    instant = utc_instant(expires_at, "expires_at")  # its offset read once
    if instant <= now:
        raise InvalidInput(
            f"expires_at {instant.isoformat()} is not in the future; a memory that "
            "should not be recalled need not be remembered (or forget it)."
        )
    return instant
