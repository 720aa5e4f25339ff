"""Expiry and staleness in ``where`` clauses: a memory past its ``expires_at`` is never
recalled or searched, one with ``superseded_at`` set is history, not advice
(docs/forgetting.md). A Pack older than schema 2 has neither column (opened read-only it
is not migrated), so the clauses apply only where the columns exist.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from packs.errors import InvalidInput
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

EXPIRES = "expires_at"
SUPERSEDED = "superseded_at"
NOT_SUPERSEDED = f"{SUPERSEDED} IS NULL"


def has_lifecycle(store: PackStore) -> bool:
    """Whether the Pack's ``memories`` carry the lifecycle columns (schema 2)."""
    return store.has_column(schemas.MEMORIES, SUPERSEDED)


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
    if expires_at.tzinfo is None or expires_at.utcoffset() is None:
        raise InvalidInput(
            f"expires_at {expires_at.isoformat()} has no time zone; pass an aware datetime "
            "(e.g. with tzinfo=UTC) so it means one instant."
        )
    if expires_at <= now:
        raise InvalidInput(
            f"expires_at {expires_at.isoformat()} is not in the future; a memory that "
            "should not be recalled need not be remembered (or forget it)."
        )
    return expires_at.astimezone(UTC)
