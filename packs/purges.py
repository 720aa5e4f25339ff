"""A purge's bound: at most one per Pack every ``flush.purge_every_seconds`` (60 s by
default; docs/forgetting.md, docs/settings.md).

A purge rewrites every text table of every user and drops all time travel: 4.4 s and
117 MiB of writes on a 300k-row Pack (issue 31). Without a bound, one agent repeating a
one-row ``forget(purge=True)`` keeps a server purging. So a ``forget(purge=True)``
purges at once only when the Pack's last purge a forget asked for (any process's: kept
in ``pack_meta`` as ``last_purge_at``) is at least that old; otherwise its forget is
done (rows deleted, tombstone written, every process stops recalling them) and the purge
is queued on the handle: one timer runs it when the bound allows, and every purge asked
for meanwhile joins that one run, since a purge takes every pending forget. A handle
closed before its timer leaves the forgets pending, and the next purge or
``maintain-pack`` takes them. ``maintain-pack``'s purge is the operator's: not bounded,
and not counted.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta

from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.erasure import purge_pending
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)

LAST_PURGE = "last_purge_at"  # pack_meta: when a forget's purge last started (ISO 8601)


class PurgeQueue:
    """Runs one handle's purges within the bound, coalescing those that must wait."""

    def __init__(self, store: PackStore, settings: ActiveSettings) -> None:
        self._store = store
        self._settings = settings  # flush.purge_every_seconds: the bound
        self._mutex = threading.Lock()
        self._timer: threading.Timer | None = None
        self._due: datetime | None = None

    def request(self) -> datetime | None:
        """Purge now (None) if the bound allows, else the time the queued purge runs."""
        with self._mutex:
            if self._timer is not None and self._due is not None:
                return self._due  # joins the run already queued
            every = timedelta(seconds=self._settings.value.flush.purge_every_seconds)
            last = _last_purge(self._store)
            now = datetime.now(UTC)
            if last is None or now - last >= every:
                self._purge()
                return None
            self._due = last + every
            self._timer = threading.Timer((self._due - now).total_seconds(), self._run)
            self._timer.daemon = True
            self._timer.start()
            return self._due

    def _run(self) -> None:
        with self._mutex:
            self._timer = self._due = None
            try:
                self._purge()
            except Exception as exc:  # noqa: BLE001 - a timer thread must not die
                # The forgets stay pending: the next purge or maintain-pack takes them.
                log.warning("Queued purge of Pack %r failed: %s", self._store.location.name, exc)

    def _purge(self) -> None:
        self._store.write_meta({LAST_PURGE: datetime.now(UTC).isoformat()})  # first: a bound
        purge_pending(self._store)

    def stop(self) -> None:
        """Cancel a queued purge (its forgets stay pending for the next purge)."""
        with self._mutex:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._due = None


def _last_purge(store: PackStore) -> datetime | None:
    """When a forget's purge last started on this Pack, from any process."""
    store.latest_version(schemas.PACK_META)
    value = store.read_meta().get(LAST_PURGE)
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:  # not a time: no bound to keep
        return None
