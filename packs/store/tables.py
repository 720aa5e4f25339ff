"""The table handles of one Pack, and how faults on them are retried: the base of
:class:`packs.store.gateway.PackStore` (connection, opening, versions, maintenance).

Two kinds of fault are retried here, a bounded number of times, because the step did
not happen and trying again is safe:

- write contention: Lance gave up on its own commit retries (many writers on one table);
- a file that vanished under a read or a commit: another process's cleanup removed the
  files of an old version this handle still read (maintenance with a retention below
  the read window, docs/durability.md). The latest version has its files, so the step is
  retried on it. If the file is still missing or unreadable there, the Pack is damaged
  (a deleted or corrupted file): :class:`~packs.errors.DamagedPack` names the table and
  what to do.
"""

from __future__ import annotations

import os
import random
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from packs.errors import (
    DamagedPack,
    InvalidInput,
    PackNotFound,
    ReadOnlyPack,
    TransientStorageError,
)
from packs.store import schemas
from packs.store.faults import CONTENTION_RETRIES, is_contention, is_damage, storage_step
from packs.store.locations import PackLocation, is_remote, redact_url

T = TypeVar("T")

# How stale a writable handle's view of other processes' commits may be (hand-set: the
# shared-learning target is "another process's next recall within 2 s", issue 14).
WRITER_CONSISTENCY = timedelta(seconds=1)
# A step that met a vanished or unreadable file is retried on the latest version this many
# times, after 0.1, 0.2, 0.4 s (hand-set): a cleanup race passes at the first retry
# (tests/packs/store/test_retention_race.py), a damaged file never does.
DAMAGE_RETRIES = 3


class TableAccess:
    """Connection and table handles of one Pack; reads and commits with their retries."""

    def __init__(self, location: PackLocation, *, read_only: bool) -> None:
        self.location = location
        self.read_only = read_only
        self._conn: Any = None
        self._tables: dict[str, Any] = {}
        self._pinned: dict[str, int] = {}  # tables checked out at a past version
        self._committed: dict[str, int] = {}  # the version this handle's last commit made
        self.text_indexed = False  # memories' full-text indexes seen (packs/store/fulltext.py)
        self._known_columns: set[tuple[str, str]] = set()  # StoreAdmin.has_column
        self.tags_checked: tuple[float, bool] = (0.0, False)  # packs/recall/indexed.py
        self.commits = 0  # writes this handle made or tried (the vector cache compares it)

    @property
    def _db(self) -> Any:
        # Connecting to a local path creates the folder, so connect only when needed.
        if self._conn is None:
            import lancedb  # here, not at the top: `from packs import Pack` pays none of it

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

    def _table(self, name: str) -> Any:
        if name not in self._tables:
            try:
                with storage_step(self.location, f"open table {name!r}"):
                    self._tables[name] = self._db.open_table(name)
            except TransientStorageError as exc:
                if is_damage(exc):  # its latest manifest: no cleanup race can explain it
                    raise self.damaged(name, str(exc.__cause__ or exc)) from exc
                raise
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

    def _commit(self, name: str, step: str, write: Callable[[], Any]) -> Any:
        """Run one commit to ``name``; on write contention (Lance gave up on its own
        retries: the commit did not land) wait with jittered backoff and try again, and on
        a vanished file retry on the latest version (:meth:`_read`), a bounded number of
        times. Other faults go through :func:`storage_step` unchanged."""
        self.commits += 1
        for attempt in range(CONTENTION_RETRIES + 1):
            try:
                with storage_step(self.location, step):
                    result = write()
                version = getattr(result, "version", None)
                if isinstance(version, int):
                    self._committed[name] = version
                return result
            except TransientStorageError as exc:
                if is_damage(exc):
                    self._after_damage(name, exc, attempt)
                    continue
                if not is_contention(exc) or attempt == CONTENTION_RETRIES:
                    raise
                time.sleep(random.uniform(0.5, 1.5) * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def committed_version(self, name: str) -> int | None:
        """The version of ``name`` this handle's last commit to it made (None before one)."""
        return self._committed.get(name)

    def _read(
        self, name: str, step: str, read: Callable[[Any], T], version: int | None = None
    ) -> T:
        """``read(table)`` of ``name`` (at ``version`` when given); a file that vanished
        under it is retried on the latest version, and if it is missing or unreadable
        there too, :class:`DamagedPack` is raised."""
        for attempt in range(DAMAGE_RETRIES + 1):
            table = self._table(name) if version is None else self._at_version(name, version)
            try:
                with storage_step(self.location, step):
                    return read(table)
            except TransientStorageError as exc:
                if not is_damage(exc) or version is not None or name in self._pinned:
                    raise
                self._after_damage(name, exc, attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _after_damage(self, name: str, exc: TransientStorageError, attempt: int) -> None:
        """Wait, then look at the latest version of ``name``; past the retries, the file
        is missing or unreadable at the latest version too: the Pack is damaged."""
        if attempt >= DAMAGE_RETRIES:
            raise self.damaged(name, str(exc.__cause__ or exc)) from exc
        time.sleep(0.1 * 2**attempt)
        table = self._table(name)
        with storage_step(self.location, f"refresh {name!r}"):
            table.checkout_latest()

    def damaged(self, name: str, why: str) -> DamagedPack:
        """The error for table ``name`` found damaged (``why``: what was found)."""
        where = f"{redact_url(self.location.root)}/{self.location.name}"
        return DamagedPack(
            f"Table {name!r} of Pack {self.location.name!r} ({where}) is damaged: {why}. "
            "A file it needs was deleted or corrupted; retrying can't help. Restore the "
            "Pack from a backup; `wolfie doctor --pack "
            f"{self.location.name}` checks every table."
        )

    def drop_table(self, name: str) -> None:
        """Remove table ``name`` (a half-made one, :mod:`packs.store.integrity`)."""
        self.require_writable(f"drop table {name!r}")
        with storage_step(self.location, f"drop table {name!r}"):
            self._db.drop_table(name)
        self._tables.pop(name, None)

    def versions(self, name: str) -> list[dict[str, Any]]:
        """Every version of ``name``, oldest first: ``version`` and ``timestamp``."""
        found = self._read(name, f"list versions of {name!r}", lambda t: t.list_versions())
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
        stats = self._read(name, f"stats of {name!r}", lambda t: t.stats())
        return int(stats["fragment_stats"]["num_fragments"])

    # --- maintenance -----------------------------------------------------------------------

    def optimize(self, name: str, retention: timedelta | None = None) -> int:
        """Merge small fragments of ``name``, update its indexes and drop versions older
        than ``retention`` (LanceDB's default, 7 days, when None; younger ones stay for
        time travel; 0 keeps the latest only: a purge); returns how many were removed."""
        self.require_writable(f"optimize {name!r}")
        self.commits += 1
        table = self._table(name)
        with storage_step(self.location, f"optimize {name!r}"), warnings.catch_warnings():
            # LanceDB warns that retention 0 fails readers of older versions: a purge
            # means exactly that (docs/forgetting.md, docs/durability.md say what it costs).
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

    def indexes(self, name: str) -> list[tuple[str, tuple[str, ...], str]]:
        """Every index of ``name``: (type, columns, index name)."""
        with storage_step(self.location, f"list indexes of {name!r}"):
            found = self._table(name).list_indices()
            return [(str(i.index_type), tuple(i.columns), str(i.name)) for i in found]

    def drop_index(self, name: str, index: str) -> None:
        """Remove the index named ``index`` of table ``name``."""
        self.require_writable(f"drop index {name}.{index}")
        with storage_step(self.location, f"drop index {name}.{index}"):
            self._table(name).drop_index(index)

    def create_index(self, name: str, column: str, config: Any) -> None:
        """Build an index on ``column`` (a ``lancedb.index`` config)."""
        self.require_writable(f"index {name}.{column}")
        with storage_step(self.location, f"index {name}.{column}"):
            self._table(name).create_index(column, config=config)


SETTLE_NS = 1_000_000_000  # hand-set, far above any file-system timestamp tick


def commit_marker(versions_dir: str | None, settled: bool = False) -> tuple[int, int] | None:
    """(inode, mtime) of a local table's ``_versions`` folder, or None when unknown.

    Every commit adds a manifest there, so an unchanged marker means no new version, and
    one ``stat`` (microseconds) replaces a call into LanceDB's event loop (docs/recall.md).
    ``settled``: a folder changed within the last :data:`SETTLE_NS` gives None, since two
    commits in one clock tick could share an mtime (without it, such a commit goes unseen
    for at most the vector cache's ``LOOK_EVERY_S``).
    """
    if versions_dir is None:
        return None
    try:
        stat = os.stat(versions_dir)
    except OSError:
        return None
    if settled and time.time_ns() - stat.st_mtime_ns < SETTLE_NS:
        return None
    return stat.st_ino, stat.st_mtime_ns
