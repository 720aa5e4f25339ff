"""Write buffering for the hot path: log rows and pending learning, flushed in batches.

Every LanceDB write is a commit and a new fragment, so one commit per recall would
fragment the tables. Recalls and rewards are buffered here and flushed together when
``flush_rows`` rows are pending or ``flush_seconds`` have passed since the first pending
row (checked on each call), on ``Pack.flush()``, on ``Pack.close()`` and at interpreter
exit. See ``docs/durability.md`` for what a crash may lose.
"""

from __future__ import annotations

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
        return self._rows.get(table, [])

    def row_count(self, learning: int = 0) -> int:
        """Buffered log rows, plus ``learning`` pending steps and uses."""
        return sum(len(r) for r in self._rows.values()) + learning

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
        return self._since is None

    def discard(self, table: str, column: str, values: set[str]) -> int:
        """Drop the pending rows of ``table`` whose ``column`` is in ``values`` (rows of
        forgotten memories and episodes); how many."""
        rows = self._rows.get(table, [])
        kept = [row for row in rows if row.get(column) not in values]
        if len(kept) != len(rows):
            self._rows[table] = kept
        return len(rows) - len(kept)

    # --- draining ----------------------------------------------------------------------

    def drain(
        self, schemas: dict[str, pa.Schema], refused: list[RefusedRow] | None = None
    ) -> dict[str, pa.Table]:
        """Take every pending row, as one Arrow table per log table. A row Arrow can't
        convert (text that is no valid UTF-8) goes to ``refused`` instead, so one bad row
        never blocks the others; without ``refused`` it raises."""
        tables = {
            name: _to_table(name, rows, schemas[name], refused)
            for name, rows in self._rows.items()
            if rows
        }
        self._rows = defaultdict(list)
        self._since = None
        return tables

    def restore(self, tables: dict[str, pa.Table]) -> None:
        """Put back what a failed flush had not written yet, ahead of anything newer."""
        for name, table in tables.items():
            self._rows[name] = table.to_pylist() + self._rows.get(name, [])
            self.retried.add(name)
        if tables:
            self._since = self._since or time.monotonic()


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
