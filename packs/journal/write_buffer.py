"""Write buffering for the hot path: log rows and pending learning, flushed in batches.

Every LanceDB write is a commit and a new fragment, so one commit per recall would
fragment the tables. Recalls and rewards are buffered here and flushed together when
``flush_rows`` rows are pending or ``flush_seconds`` have passed since the first pending
row (checked on each call), on ``Pack.flush()``, on ``Pack.close()`` and at interpreter
exit. See ``docs/durability.md`` for what a crash may lose.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

import pyarrow as pa

# (table, row, why): a buffered row that can't become Arrow data.
RefusedRow = tuple[str, dict[str, Any], BaseException]
# What converting Python values to Arrow raises for a bad value: Arrow's own errors, and
# UnicodeEncodeError (a ValueError) for a lone surrogate in a string.
_CONVERSION_ERRORS = (pa.ArrowException, ValueError, TypeError)


class WriteBuffer:
    """Pending log rows per table. Pending learning (steps, uses) is held by the
    handle's :class:`~packs.learning.state.LearningState`; every step or use comes with
    a log row buffered here, so this buffer's clock times both."""

    def __init__(self, flush_rows: int, flush_seconds: float) -> None:
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        # Rows a flush took and has not stored yet (being written without the handle's
        # lock, or left by a failed write for the next flush): still found by lookups.
        # Only the flush holding the journal's writing lock replaces it, whole.
        self._sent: dict[str, list[dict[str, Any]]] = {}
        self._sent_lock = threading.Lock()  # its swaps, by the flush and by discard
        self._since: float | None = None
        # Tables whose rows came back from a failed flush: their commit may have landed,
        # so the next write must be idempotent (merge_insert) rather than an append.
        self.retried: set[str] = set()
        # Buffered reward events under a caller's idempotency key: another process may
        # receive the same key, so these are written by merge on their event id.
        self.keyed: set[str] = set()

    # --- adding ------------------------------------------------------------------------

    def add_rows(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._rows[table].extend(rows)
            self._since = self._since or time.monotonic()

    # --- reading -----------------------------------------------------------------------

    def pending_rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of ``table`` not stored yet: taken by a flush, or still waiting."""
        return [*self._sent.get(table, []), *self._rows.get(table, [])]

    def unsent_rows(self, table: str) -> list[dict[str, Any]]:
        """The rows of ``table`` no flush has taken yet: only these may still change."""
        return self._rows.get(table, [])

    def row_count(self, learning: int = 0) -> int:
        """Buffered log rows, plus ``learning`` pending steps and uses."""
        sent = sum(len(r) for r in self._sent.values())
        return sent + sum(len(r) for r in self._rows.values()) + learning

    def due(self, learning: int = 0) -> bool:
        """``flush_rows`` rows (log rows plus ``learning`` steps and uses) are pending, or
        ``flush_seconds`` passed since the first one; pending learning with no log row
        left (a flush failed after writing the logs) is due at once."""
        if self._since is None:
            return learning > 0
        if self.row_count(learning) >= self.flush_rows:
            return True
        return time.monotonic() - self._since >= self.flush_seconds

    def empty(self) -> bool:
        return self._since is None and not self._sent

    def discard(self, table: str, column: str, values: set[str]) -> int:
        """Drop the pending rows of ``table`` whose ``column`` is in ``values`` (rows of
        forgotten memories and episodes), waiting or left by a failed flush; how many.
        Rows a flush is writing now land (the purge's late pass erases them)."""
        rows = self._rows.get(table, [])
        kept = [row for row in rows if row.get(column) not in values]
        if len(kept) != len(rows):
            self._rows[table] = kept
        with self._sent_lock:
            sent = self._sent.get(table, [])
            left = [row for row in sent if row.get(column) not in values]
            if len(left) != len(sent):
                self._sent = {**self._sent, table: left}  # new: a flush may hold the old
        return len(rows) - len(kept) + len(sent) - len(left)

    # --- draining ----------------------------------------------------------------------

    def drain(self) -> dict[str, list[dict[str, Any]]]:
        """Take every row not stored yet (what a failed flush left first), to write; they
        stay found by :meth:`pending_rows` until :meth:`landed`. Called by the flush that
        holds the writing lock, under the handle's lock; the rows are converted to Arrow
        (:func:`to_tables`) without it."""
        with self._sent_lock:
            taken = {name: list(rows) for name, rows in self._sent.items() if rows}
            for name, rows in self._rows.items():
                if rows:
                    taken[name] = [*taken.get(name, []), *rows]
            self._sent = taken
        self._rows = defaultdict(list)
        self._since = None
        return taken

    def landed(self, table: str) -> None:
        """``table``'s taken rows are stored: lookups read them from the table now."""
        with self._sent_lock:
            self._sent = {name: rows for name, rows in self._sent.items() if name != table}

    def unwritten(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Of ``table``'s taken rows, a failed write stored all but ``rows``."""
        with self._sent_lock:
            self._sent = {**self._sent, table: rows}

    def landed_all(self) -> None:
        """Every taken row is gone (stored, or dropped with a deleted Pack)."""
        with self._sent_lock:
            self._sent = {}

    def failed(self) -> None:
        """The flush stopped: what it had not stored stays taken, for the next flush to
        write first (idempotently, by key: its commit may have landed)."""
        with self._sent_lock:
            self.retried.update(self._sent)
        if self._sent:
            self._since = self._since or time.monotonic()


def to_tables(
    taken: dict[str, list[dict[str, Any]]],
    schemas: dict[str, pa.Schema],
    refused: list[RefusedRow] | None = None,
) -> dict[str, pa.Table]:
    """``taken`` rows as one Arrow table per log table. A row Arrow can't convert (text
    that is no valid UTF-8) goes to ``refused`` instead, so one bad row never blocks the
    others; without ``refused`` it raises."""
    return {
        name: _to_table(name, rows, schemas[name], refused) for name, rows in taken.items() if rows
    }


def _to_table(
    name: str, rows: list[dict[str, Any]], schema: pa.Schema, refused: list[RefusedRow] | None
) -> pa.Table:
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except _CONVERSION_ERRORS:
        if refused is None:
            raise
    good = []
    for row in rows:  # only after a failure: find the rows at fault, one by one
        try:
            pa.Table.from_pylist([row], schema=schema)
        except _CONVERSION_ERRORS as exc:
            refused.append((name, row, exc))
        else:
            good.append(row)
    return pa.Table.from_pylist(good, schema=schema)
