"""The maintenance half of the storage gateway: compaction and old-version cleanup,
indexes, schema changes, and the deletes and rewrites that erase rows for good
(docs/forgetting.md). :class:`~packs.store.gateway.PackStore` inherits it; every call
runs inside :func:`packs.store.faults.storage_step` like the gateway's own.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pyarrow as pa

from packs.store.faults import storage_step
from packs.store.locations import PackLocation


class StoreAdmin:
    """Maintenance, schema changes and erasure of one Pack's tables (a PackStore mixin)."""

    location: PackLocation
    read_only: bool
    _known_columns: set[tuple[str, str]]

    def _table(self, name: str) -> Any:  # pragma: no cover - PackStore's
        raise NotImplementedError

    def require_writable(self, action: str) -> None:  # pragma: no cover - PackStore's
        raise NotImplementedError

    def _commit(self, step: str, write: Callable[[], Any]) -> Any:  # pragma: no cover
        raise NotImplementedError

    def fragment_count(self, name: str) -> int:
        with storage_step(self.location, f"stats of {name!r}"):
            return int(self._table(name).stats()["fragment_stats"]["num_fragments"])

    def optimize(self, name: str, retention: timedelta | None = None) -> int:
        """Merge small fragments of ``name``, update its indexes and drop versions older
        than ``retention`` (LanceDB's default, 7 days, when None; younger ones stay for
        time travel; 0 keeps the latest only: a purge); returns how many were removed."""
        self.require_writable(f"optimize {name!r}")
        table = self._table(name)
        with storage_step(self.location, f"optimize {name!r}"), warnings.catch_warnings():
            # LanceDB warns that retention 0 fails readers of older versions: a purge
            # means exactly that (docs/forgetting.md says what it costs them).
            warnings.simplefilter("ignore", UserWarning)
            before = len(table.list_versions())
            table.optimize(cleanup_older_than=retention)
            return before - len(table.list_versions())

    def indexed_columns(self, name: str) -> set[str]:
        return {c for columns in self.index_types(name).values() for c in columns}

    def index_types(self, name: str) -> dict[str, set[str]]:
        """Indexed columns of ``name`` by index type (``FTS``, ``BTree``, ``IVF_SQ``...)."""
        with storage_step(self.location, f"list indexes of {name!r}"):
            found: dict[str, set[str]] = {}
            for index in self._table(name).list_indices():
                found.setdefault(str(index.index_type), set()).update(index.columns)
            return found

    def create_index(self, name: str, column: str, config: Any) -> None:
        """Build an index on ``column`` (a ``lancedb.index`` config), replacing one there."""
        self.require_writable(f"index {name}.{column}")
        with storage_step(self.location, f"index {name}.{column}"):
            self._table(name).create_index(column, config=config)

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
            self._commit(f"delete from {name!r}", lambda: table.delete(where))
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
        result = self._commit(f"rewrite {name!r}", lambda: table.update(values_sql={first: first}))
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
            self._commit(f"add columns to {name!r}", lambda: table.add_columns(missing))
        except (ValueError, RuntimeError, OSError):
            with storage_step(self.location, f"schema of {name!r}"):
                table.checkout_latest()
                if any(f.name not in table.schema.names for f in missing):
                    raise
        return [f.name for f in missing]
