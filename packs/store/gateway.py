"""The one storage gateway: every LanceDB read and write of a Pack goes through
:class:`PackStore`, and every fault through :func:`packs.store.faults.storage_step`.

Other modules never hold a LanceDB table: they ask it for rows, counts, nearest neighbours
(LanceDB's cosine ``_distance``; ``packs.recall.ranking.similarity_from_distance`` makes it
a similarity), versions and commits. Only modules in ``packs/store/`` import ``lancedb``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

from packs.errors import InvalidInput, PackNotFound, ReadOnlyPack, TransientStorageError
from packs.store import schemas
from packs.store.faults import CONTENTION_RETRIES, is_contention, storage_step
from packs.store.filters import in_clause
from packs.store.locations import PackLocation, is_remote

VECTOR_COLUMN = "intent_embedding"
# Maintenance's IVF_SQ index scores 8-bit codes: at 1M rows it found 0.89 of the exact
# top-10 alone, all of them once REFINE_FACTOR x limit candidates were re-scored on the full
# vectors (measured, docs/recall.md), which also makes distances exact for the similarity
# floor and the z-scores. Probes: LanceDB's default, 20. Without an index nothing changes.
REFINE_FACTOR = 4


# How stale a writable handle's view of other processes' commits may be (hand-set: the
# shared-learning target is "another process's next recall within 2 s", issue 14).
WRITER_CONSISTENCY = timedelta(seconds=1)


class PackStore:
    """The LanceDB tables of one Pack. All I/O of the engine goes through here."""

    def __init__(self, location: PackLocation, *, read_only: bool) -> None:
        self.location = location
        self.read_only = read_only
        self._conn: Any = None
        self._tables: dict[str, Any] = {}
        self._pinned: dict[str, int] = {}  # tables checked out at a past version
        self.text_indexed = False  # memories' full-text indexes seen (packs/store/fulltext.py)
        self.tags_checked: tuple[float, bool] = (0.0, False)  # packs/recall/indexed.py
        self.commits = 0  # writes this handle made or tried (the vector cache compares it)

    @property
    def _db(self) -> Any:
        # Connecting to a local path creates the folder, so connect only when needed.
        if self._conn is None:
            self._conn = lancedb.connect(
                self.location.uri,
                storage_options=self.location.storage_options or None,
                # Every handle sees other processes' commits without reopening: readers
                # at once, writers within WRITER_CONSISTENCY (one check a second per
                # table instead of one per call; docs/durability.md).
                read_consistency_interval=(
                    timedelta(seconds=0) if self.read_only else WRITER_CONSISTENCY
                ),
            )
        return self._conn

    def table_names(self) -> set[str]:
        names: set[str] = set()
        token = None
        with storage_step(self.location, "list tables"):
            while True:
                page = self._db.list_tables(page_token=token, limit=1000)
                names.update(page.tables)
                token = page.page_token
                if not token:
                    return names

    def exists(self) -> bool:
        if not is_remote(self.location.uri) and not Path(self.location.uri).is_dir():
            return False
        return schemas.PACK_META in self.table_names()

    def deleted(self) -> bool:
        """True when a local Pack's folder (its ``pack_meta`` table) is gone since it was
        opened: writing now would recreate half a Pack. One ``stat``; on object storage,
        where a check costs a request, always False."""
        if is_remote(self.location.uri):
            return False
        return not (Path(self.location.uri) / f"{schemas.PACK_META}.lance").is_dir()

    def create(self, dim: int) -> None:
        """Create every table that does not exist yet (safe to call again)."""
        self.require_writable("create the Pack")
        existing = self.table_names()
        with storage_step(self.location, "create tables"):
            for name, schema in schemas.all_schemas(dim).items():
                if name not in existing:
                    self._db.create_table(name, schema=schema, exist_ok=True)

    def _table(self, name: str) -> Any:
        if name not in self._tables:
            try:
                with storage_step(self.location, f"open table {name!r}"):
                    self._tables[name] = self._db.open_table(name)
            except (FileNotFoundError, ValueError) as exc:
                raise PackNotFound(
                    f"Pack {self.location.name!r} under {self.location.root!r} has no "
                    f"table {name!r}; create it with Pack.open(..., create=True)."
                ) from exc
        return self._tables[name]

    def _at_version(self, name: str, version: int | None = None) -> Any:
        """A handle on ``name`` at ``version`` (time travel), or at the latest commit."""
        if version is None:
            table = self._table(name)
            with storage_step(self.location, f"refresh {name!r}"):
                table.checkout_latest()
            return table
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InvalidInput(f"version must be a positive int, got {version!r}.")
        with storage_step(self.location, f"open {name!r} at version {version}"):
            table = self._db.open_table(name)
            try:
                table.checkout(version)
            except ValueError as exc:
                raise InvalidInput(
                    f"Table {name!r} of Pack {self.location.name!r} has no version {version}."
                ) from exc
        return table

    def has_table(self, name: str) -> bool:
        return name in self._tables or name in self.table_names()

    def ensure_table(self, name: str, schema: pa.Schema) -> None:
        """Open ``name``, creating it with ``schema`` first when it is missing."""
        if not self.has_table(name):
            self.require_writable(f"create table {name!r}")
            with storage_step(self.location, f"create table {name!r}"):
                self._db.create_table(name, schema=schema, exist_ok=True)

    def require_writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyPack(
                f"Pack {self.location.name!r} is open read-only; cannot {action}. "
                "Open it with read_only=False to write."
            )

    # --- pack_meta: small JSON values, upserted by key -------------------------------

    def read_meta(self) -> dict[str, Any]:
        table = self._table(schemas.PACK_META)
        with storage_step(self.location, "read Pack metadata"):
            rows = table.to_arrow().to_pylist()
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
            table = self._table(name)
            self._commit(f"append to {name!r}", lambda: table.add(data, on_bad_vectors="null"))

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
        the columns when ``insert`` is False. Returns the number of rows inserted.
        """
        self.require_writable(f"write to {name!r}")
        if not data.num_rows:
            return 0
        table = self._table(name)
        builder = table.merge_insert(on)
        if update is True:
            builder = builder.when_matched_update_all()
        elif isinstance(update, str):
            # not through a BTREE on ``on``: LanceDB 0.40 panics there (docs/recall.md)
            builder = builder.when_matched_update_all(where=update).use_index(False)
        if insert:
            builder = builder.when_not_matched_insert_all()
        result = self._commit(
            f"merge into {name!r}", lambda: builder.execute(data, on_bad_vectors="null")
        )
        return int(getattr(result, "num_inserted_rows", 0) or 0)

    def increment(
        self, name: str, ids: list[str], column: str, by: int, stamp: str | None = None
    ) -> None:
        """``column += by`` for rows with ``id`` in ``ids``, in one commit that concurrent
        writers can't lose (Lance retries an update that meets a conflicting commit).
        ``stamp`` names a timestamp column set to now."""
        self.require_writable(f"update {name!r}")
        if isinstance(by, bool) or not isinstance(by, int):
            raise InvalidInput(f"increment must be an int, got {by!r}.")
        values = {column: f"{column} + {by}"}
        if stamp:
            values[stamp] = "arrow_cast(now(), 'Timestamp(Microsecond, Some(\"UTC\"))')"
        table = self._table(name)
        self._commit(
            f"update {name!r}", lambda: table.update(where=in_clause("id", ids), values_sql=values)
        )

    def _commit(self, step: str, write: Callable[[], Any]) -> Any:
        """Run one commit; on write contention (Lance gave up on its own retries: it did not
        land) back off and try again, a bounded number of times; other faults unchanged."""
        self.commits += 1
        for attempt in range(CONTENTION_RETRIES + 1):
            try:
                with storage_step(self.location, step):
                    return write()
            except TransientStorageError as exc:
                if not is_contention(exc) or attempt == CONTENTION_RETRIES:
                    raise
                time.sleep(random.uniform(0.5, 1.5) * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def drop_all(self) -> None:  # wolfie demo --fresh
        self.require_writable("drop the Pack")
        with storage_step(self.location, "drop tables"):
            self._db.drop_all_tables()
        self._tables.clear()

    # --- reads ----------------------------------------------------------------------------

    def count(self, name: str, where: str | None = None, *, version: int | None = None) -> int:
        """Rows of ``name`` (matching ``where``; at ``version`` when given)."""
        table = self._table(name) if version is None else self._at_version(name, version)
        with storage_step(self.location, f"count {name!r}"):
            return int(table.count_rows(where))

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
        table = self._table(name) if version is None else self._at_version(name, version)
        with storage_step(self.location, f"read {name!r}"):
            wanted = [*dict.fromkeys(columns), *(["_rowid"] if with_row_id else [])]
            query = table.search().select(wanted).limit(limit)  # None: every row
            if with_row_id:
                query = query.with_row_id(True)
            if where:
                query = query.where(where)
            return query.to_arrow()

    def get(
        self, name: str, where: str, columns: list[str] | None = None, limit: int = 1
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` rows matching ``where`` as dicts (every column by default)."""
        table = self._table(name)
        with storage_step(self.location, f"read {name!r}"):
            query = table.search().where(where)
            if columns is not None:
                query = query.select(columns)
            return list(query.limit(limit).to_list())

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
        table = self._table(name)
        with storage_step(self.location, f"search {name!r}"):
            query = table.search(vector, vector_column_name=VECTOR_COLUMN).distance_type("cosine")
            if exact:
                query = query.bypass_vector_index()
            query = query.refine_factor(REFINE_FACTOR).select([*columns, "_distance"]).limit(limit)
            if where:
                query = query.where(where, prefilter=prefilter)
            return query.to_arrow()

    def schema(self, name: str, version: int | None = None) -> pa.Schema:
        return (self._table(name) if version is None else self._at_version(name, version)).schema

    def versions(self, name: str) -> list[dict[str, Any]]:
        """Every version of ``name``, oldest first: ``version`` and ``timestamp``."""
        with storage_step(self.location, f"list versions of {name!r}"):
            found = self._table(name).list_versions()
        return [{"version": v["version"], "timestamp": v["timestamp"]} for v in found]

    def version(self, name: str) -> int:
        """The version of ``name`` this handle reads (within its read consistency)."""
        with storage_step(self.location, f"version of {name!r}"):
            return int(self._table(name).version)

    def latest_version(self, name: str) -> int:
        """The newest committed version of ``name`` (other handles' commits included)."""
        table = self._table(name)
        with storage_step(self.location, f"refresh {name!r}"):
            table.checkout_latest()
            return int(table.version)

    def versions_dir(self, name: str) -> str | None:
        """A local table's ``_versions`` folder (one manifest per commit), else None."""
        uri = str(self._table(name).uri)
        if is_remote(uri):
            return None
        path = Path(uri.removeprefix("file://")) / "_versions"
        return str(path) if path.is_dir() else None

    def pin(self, name: str, version: int) -> None:
        """Check ``name`` out at ``version`` for every later read through this handle
        (a reproducible eval); in-process caches stand aside while it is pinned."""
        table = self._table(name)
        with storage_step(self.location, f"check {name!r} out at version {version}"):
            table.checkout(version)
        self._pinned[name] = version

    def pinned(self, name: str) -> bool:
        return name in self._pinned

    def fragment_count(self, name: str) -> int:
        with storage_step(self.location, f"stats of {name!r}"):
            return int(self._table(name).stats()["fragment_stats"]["num_fragments"])

    # --- maintenance -----------------------------------------------------------------------

    def optimize(self, name: str, retention: timedelta | None = None) -> int:
        """Merge small fragments of ``name``, update its indexes and drop versions older
        than ``retention`` (LanceDB's default, 7 days, when None; younger ones stay for
        time travel); returns how many versions were removed."""
        self.require_writable(f"optimize {name!r}")
        self.commits += 1
        table = self._table(name)
        with storage_step(self.location, f"optimize {name!r}"):
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
        """Build an index on ``column`` (a ``lancedb.index`` config)."""
        self.require_writable(f"index {name}.{column}")
        with storage_step(self.location, f"index {name}.{column}"):
            self._table(name).create_index(column, config=config)
