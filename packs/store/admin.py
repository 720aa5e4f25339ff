"""The admin half of the storage gateway: schema changes, and the deletes and rewrites
that erase rows for good (docs/forgetting.md); compaction, cleanup and indexes are in
:class:`~packs.store.tables.TableAccess`. :class:`~packs.store.gateway.PackStore`
inherits it; every call runs inside :func:`packs.store.faults.storage_step`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from packs.store.faults import storage_step
from packs.store.locations import PackLocation


class StoreAdmin:
    """Schema changes and erasure of one Pack's tables (a PackStore mixin)."""

    location: PackLocation
    read_only: bool
    _known_columns: set[tuple[str, str]]

    def _table(self, name: str) -> Any:  # pragma: no cover - PackStore's
        raise NotImplementedError

    def require_writable(self, action: str) -> None:  # pragma: no cover - PackStore's
        raise NotImplementedError

    def _commit(
        self, name: str, step: str, write: Callable[[], Any]
    ) -> Any:  # pragma: no cover - TableAccess's
        raise NotImplementedError

    # --- erasure ---------------------------------------------------------------------------

    def delete(self, name: str, where: str) -> int:
        """Delete the rows of ``name`` matching ``where`` (one commit); how many there were.
        The bytes stay in the data files until :meth:`rewrite` and a purge remove them."""
        self.require_writable(f"delete from {name!r}")
        table = self._table(name)
        with storage_step(self.location, f"count {name!r}"):
            table.checkout_latest()
            found = int(table.count_rows(where))
        if found:
            self._commit(name, f"delete from {name!r}", lambda: table.delete(where))
        return found

    def update_where(self, name: str, where: str, values_sql: dict[str, str]) -> int:
        """Set ``values_sql`` (column: SQL over the row; both trusted) in the rows of
        ``name`` matching ``where``, in one commit when any match; how many matched."""
        self.require_writable(f"update {name!r}")
        table = self._table(name)
        with storage_step(self.location, f"count {name!r}"):
            table.checkout_latest()
            found = int(table.count_rows(where))
        if found:
            self._commit(
                name, f"update {name!r}", lambda: table.update(where=where, values_sql=values_sql)
            )
        return found

    def rewrite(self, name: str) -> int:
        """Write every live row of ``name`` again, unchanged, in one commit, so no data
        file of the new version holds a deleted row (LanceDB's compaction rewrites a
        fragment only once a tenth of it is deleted); returns the rows rewritten."""
        self.require_writable(f"rewrite {name!r}")
        table = self._table(name)
        first = table.schema.names[0]
        with storage_step(self.location, f"count {name!r}"):
            table.checkout_latest()
            if not table.count_rows():
                return 0
        result = self._commit(
            name, f"rewrite {name!r}", lambda: table.update(values_sql={first: first})
        )
        return int(getattr(result, "rows_updated", 0) or 0)

    # --- schema changes --------------------------------------------------------------------

    def has_column(self, name: str, column: str) -> bool:
        """Whether ``name`` has ``column`` (a Pack older than the column has not; a
        column once seen stays: columns are only ever added)."""
        if (name, column) in self._known_columns:
            return True
        with storage_step(self.location, f"schema of {name!r}"):
            present = column in self._table(name).schema.names
        if present:
            self._known_columns.add((name, column))
        return present

    def add_columns(self, name: str, fields: Sequence[pa.Field]) -> list[str]:
        """Add the ``fields`` that ``name`` lacks, as null columns; the names added. A
        writer that added them first meanwhile is not an error."""
        self.require_writable(f"add columns to {name!r}")
        table = self._table(name)
        with storage_step(self.location, f"schema of {name!r}"):
            table.checkout_latest()
            missing = [f for f in fields if f.name not in table.schema.names]
        if not missing:
            return []
        try:
            self._commit(name, f"add columns to {name!r}", lambda: table.add_columns(missing))
        except (ValueError, RuntimeError, OSError):
            with storage_step(self.location, f"schema of {name!r}"):
                table.checkout_latest()
                if any(f.name not in table.schema.names for f in missing):
                    raise
        return [f.name for f in missing]
