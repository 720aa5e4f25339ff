"""The one storage gateway: every LanceDB read and write of a Pack goes through
:class:`PackStore`, and every fault through :func:`packs.store.faults.storage_step`.

Other modules never hold a LanceDB table: they ask the gateway for rows (``get``,
``scan``), counts (``count``), nearest neighbours (``search``, with LanceDB's cosine
``_distance``; :func:`packs.recall.ranking.similarity_from_distance` turns it into a
similarity), versions and commits. Only modules in ``packs/store/`` import ``lancedb``.
Connection, table handles, versions, maintenance and the retries of reads and commits
are in :class:`packs.store.tables.TableAccess`, its base; schema changes and the deletes
and rewrites that erase rows for good in :class:`packs.store.admin.StoreAdmin`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs.errors import InvalidInput
from packs.store import schemas
from packs.store.admin import StoreAdmin
from packs.store.faults import storage_step
from packs.store.filters import in_clause
from packs.store.tables import WRITER_CONSISTENCY, TableAccess

__all__ = ["REFINE_FACTOR", "VECTOR_COLUMN", "WRITER_CONSISTENCY", "PackStore"]

VECTOR_COLUMN = "intent_embedding"
# Maintenance's IVF_SQ index scores 8-bit codes: at 1M rows it found 0.89 of the exact
# top-10 alone, all of them once REFINE_FACTOR x limit candidates were re-scored on the full
# vectors (measured, docs/recall.md), which also makes distances exact for the similarity
# floor and the z-scores. Probes: LanceDB's default, 20. Without an index nothing changes.
REFINE_FACTOR = 4


class PackStore(TableAccess, StoreAdmin):
    """The LanceDB tables of one Pack. All I/O of the engine goes through here."""

    def create(self, dim: int) -> None:
        """Create every table that does not exist yet (safe to call again)."""
        self.require_writable("create the Pack")
        existing = self.table_names()
        with storage_step(self.location, "create tables"):
            for name, schema in schemas.all_schemas(dim).items():
                if name not in existing:
                    self._db.create_table(name, schema=schema, exist_ok=True)

    def _writable(self, name: str) -> Any:
        """The handle of ``name`` to write, creating a table of
        :data:`schemas.CREATED_ON_WRITE` the Pack lacks (one listing, on first use)."""
        if name not in self._tables and name in schemas.CREATED_ON_WRITE:
            self.ensure_table(name, schemas.CREATED_ON_WRITE[name])
        return self._table(name)

    # --- pack_meta: small JSON values, upserted by key -------------------------------

    def read_meta(self) -> dict[str, Any]:
        found = self._read(schemas.PACK_META, "read Pack metadata", lambda t: t.to_arrow())
        rows = found.to_pylist()
        return {row["key"]: json.loads(row["value_json"]) for row in rows}

    def write_meta(self, values: Mapping[str, Any]) -> None:
        self.require_writable("write Pack metadata")
        now = datetime.now(UTC)
        data = pa.Table.from_pylist(
            [
                {"key": k, "value_json": json.dumps(v, sort_keys=True), "updated_at": now}
                for k, v in values.items()
            ],
            schema=schemas.PACK_META_SCHEMA,
        )
        self.merge(schemas.PACK_META, data, "key", update=True)

    # --- writes ------------------------------------------------------------------------
    # Nullable vector columns (a chunk has no response embedding) are legitimate, so
    # writes pass on_bad_vectors="null"; our own vectors always have the right size.

    def append(self, name: str, data: pa.Table) -> None:
        self.require_writable(f"append to {name!r}")
        if data.num_rows:
            table = self._writable(name)
            self._commit(
                name, f"append to {name!r}", lambda: table.add(data, on_bad_vectors="null")
            )

    def merge(
        self,
        name: str,
        data: pa.Table,
        on: str | list[str],
        *,
        update: bool | str = False,
        insert: bool = True,
    ) -> int:
        """One ``merge_insert`` commit keyed on ``on`` (idempotent).

        ``update=True`` updates matched rows, a string updates only matched rows where
        that SQL condition holds (``target.`` / ``source.`` prefixes), ``False`` leaves
        them alone. ``insert`` adds rows whose key is new. ``data`` may hold a subset of
        the columns when ``insert`` is False. Returns the rows inserted or updated.
        """
        self.require_writable(f"write to {name!r}")
        if not data.num_rows:
            return 0
        table = self._writable(name)
        builder = table.merge_insert(on)
        if update is True:
            builder = builder.when_matched_update_all()
        elif isinstance(update, str):
            # not through a BTREE on ``on``: LanceDB 0.40 panics there (docs/recall.md)
            builder = builder.when_matched_update_all(where=update).use_index(False)
        if insert:
            builder = builder.when_not_matched_insert_all()
        result = self._commit(
            name, f"merge into {name!r}", lambda: builder.execute(data, on_bad_vectors="null")
        )
        return int(result.num_inserted_rows or 0) + int(result.num_updated_rows or 0)

    def increment(
        self, name: str, ids: list[str], column: str, by: int, stamp: str | None = None
    ) -> int:
        """``column += by`` for rows with ``id`` in ``ids``, in one commit that concurrent
        writers can't lose (Lance retries an update that meets a conflicting commit).
        ``stamp`` names a timestamp column set to now. Returns the rows updated (fewer
        than ``ids`` when some are gone)."""
        self.require_writable(f"update {name!r}")
        if isinstance(by, bool) or not isinstance(by, int):
            raise InvalidInput(f"increment must be an int, got {by!r}.")
        values = {column: f"{column} + {by}"}
        if stamp:
            values[stamp] = "arrow_cast(now(), 'Timestamp(Microsecond, Some(\"UTC\"))')"
        table = self._table(name)
        result = self._commit(
            name,
            f"update {name!r}",
            lambda: table.update(where=in_clause("id", ids), values_sql=values),
        )
        return int(getattr(result, "rows_updated", len(ids)))

    def drop_all(self) -> None:  # wolfie demo --fresh
        self.require_writable("drop the Pack")
        with storage_step(self.location, "drop tables"):
            self._db.drop_all_tables()
        self._tables.clear()

    # --- reads ----------------------------------------------------------------------------

    def count(self, name: str, where: str | None = None, *, version: int | None = None) -> int:
        """Rows of ``name`` (matching ``where``; at ``version`` when given)."""
        return self._read(name, f"count {name!r}", lambda t: int(t.count_rows(where)), version)

    def scan(
        self,
        name: str,
        columns: list[str],
        where: str | None = None,
        *,
        limit: int | None = None,
        version: int | None = None,
        with_row_id: bool = False,
    ) -> pa.Table:
        """``columns`` of every row (or of the rows matching ``where``, at most ``limit``;
        at ``version`` when given); ``with_row_id`` adds Lance's ``_rowid``. One read: no
        count first (a ``_rowid`` filter costs a pass over every row id, issue 24)."""
        wanted = [*dict.fromkeys(columns), *(["_rowid"] if with_row_id else [])]

        def read(table: Any) -> pa.Table:
            query = table.search().select(wanted).limit(limit)  # None: every row
            if with_row_id:
                query = query.with_row_id(True)
            if where:
                query = query.where(where)
            return query.to_arrow()

        return self._read(name, f"read {name!r}", read, version)

    def get(
        self, name: str, where: str, columns: list[str] | None = None, limit: int = 1
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` rows matching ``where`` as dicts (every column by default)."""

        def read(table: Any) -> list[dict[str, Any]]:
            query = table.search().where(where)
            if columns is not None:
                query = query.select(columns)
            return list(query.limit(limit).to_list())

        return self._read(name, f"read {name!r}", read)

    def search(
        self,
        name: str,
        vector: np.ndarray,
        columns: list[str],
        where: str | None = None,
        *,
        limit: int,
        prefilter: bool = True,
        exact: bool = False,
    ) -> pa.Table:
        """Cosine nearest neighbours of ``vector`` in ``name``'s intent embeddings, exact
        ``_distance`` ascending, with ``columns``; ``where`` filters first (``prefilter=False``:
        the ``limit`` found); ``exact`` compares every passing row, not the index's probes."""

        def read(table: Any) -> pa.Table:
            query = table.search(vector, vector_column_name=VECTOR_COLUMN).distance_type("cosine")
            if exact:
                query = query.bypass_vector_index()
            query = query.refine_factor(REFINE_FACTOR).select([*columns, "_distance"]).limit(limit)
            if where:
                query = query.where(where, prefilter=prefilter)
            return query.to_arrow()

        return self._read(name, f"search {name!r}", read)

    def schema(self, name: str, version: int | None = None) -> pa.Schema:
        return (self._table(name) if version is None else self._at_version(name, version)).schema
