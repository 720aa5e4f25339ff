"""Where a Pack lives and how its LanceDB tables are opened.

A Pack is one LanceDB database: ``<root>/<name>``. The root is a local folder
(default ``./.wolfie``, overridable by ``WOLFIE_ROOT``) or ``s3://bucket/prefix`` on any
S3-compatible endpoint. S3 settings come from explicit ``storage_options`` or from the
standard ``AWS_*`` environment variables, read here at open time, never at import.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import lancedb
import pyarrow as pa

from packs import schemas
from packs.errors import (
    InvalidInput,
    PackNotFound,
    ReadOnlyPack,
    StorageError,
    TransientStorageError,
    WolfieError,
)
from packs.filters import in_clause
from packs.validation import check_pack_name

DEFAULT_ROOT = ".wolfie"
# Hand-set: connecting takes milliseconds on a healthy endpoint; 30 s per request leaves
# room for large fragment uploads. Override through storage_options.
REMOTE_TIMEOUTS = {"connect_timeout": "5s", "timeout": "30s"}

# AWS_* variable -> Lance object-store option. Lance reads some of these itself, but
# naming them here makes an endpoint like moto or MinIO work without further setup.
_ENV_TO_OPTION = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_REGION": "aws_region",
    "AWS_DEFAULT_REGION": "aws_region",
    "AWS_ENDPOINT_URL_S3": "aws_endpoint",
    "AWS_ENDPOINT_URL": "aws_endpoint",
}
# An option whose name holds one of these words is a secret: never printed. The key id
# is redacted too (harmless, and it names the account).
_SECRET_WORDS = ("secret", "token", "password", "passwd", "key", "credential", "signature")


# Words in Lance / object-store errors that mean "try again later", and "never".
_TRANSIENT_MARKERS = (
    "connection refused", "failed to connect", "timed out", "timeout", "connection reset",
    "broken pipe", "slowdown", "slow down",
    "service unavailable", "temporarily", "dns error", "error sending request",
    "commit conflict", "retryable",
)  # fmt: skip
# Lance gives up after 4 attempts when many writers commit to one table at once; the
# commit did not land, so trying again is safe. 5 more tries with backoff from 0.5 s
# (hand-set, measured enough for 8 writers on moto S3 in tests/packs/test_concurrency.py).
_CONTENTION_MARKERS = ("too many concurrent writers", "commit conflict")
CONTENTION_RETRIES = 5
_PERMANENT_MARKERS = (
    "accessdenied", "access denied", "forbidden", "nosuchbucket",
    "read-only file system", "permission denied", "operation not permitted",
    "not a directory",
)  # fmt: skip
# A read-only filesystem, a denied path or a file where a folder should be: retrying
# can't help (errno numbers as Lance prints them: "(os error 30)").
_PERMANENT_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR})
_PERMANENT_OS_ERROR = re.compile(r"os error (?:1|13|20|30)\b")
# HTTP status codes match as whole numbers only: "1.169403ms" in a message is not a 403.
_PERMANENT_STATUS = re.compile(r"(?<![\d.])403(?![\d.])")
_TRANSIENT_STATUS = re.compile(r"(?<![\d.])(?:500|502|503|504)(?![\d.])")


@contextmanager
def storage_step(location: PackLocation, step: str) -> Iterator[None]:
    """Turn storage failures into Wolfie errors that name the Pack and the step.

    Transient faults (refused connections, timeouts, 5xx, commit conflicts) become
    :class:`TransientStorageError`, so Prefect retries them; denials, missing buckets,
    read-only filesystems and permission errors (EROFS, EACCES, EPERM: retrying can't
    help) become :class:`StorageError`, as does any other filesystem error but a missing
    file. Wolfie's own errors pass through unchanged. Secret storage options and a
    password in the root URL are redacted from the message.
    """
    try:
        yield
    except WolfieError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        text = str(exc).lower()
        where = f"Pack {location.name!r} at {redact_url(location.root)!r}, step {step!r}"
        shown = redact_text(str(exc), location.storage_options)
        if _is_permanent(exc, text):
            raise StorageError(f"Storage refused {where}: {shown}") from exc
        transient = _TRANSIENT_STATUS.search(text) or "lanceerror(io)" in text
        if transient or any(marker in text for marker in _TRANSIENT_MARKERS):
            raise TransientStorageError(
                f"Storage unavailable for {where}; retry later: {shown}"
            ) from exc
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            # a local filesystem fault: never a bare OSError (a missing file is left to
            # the caller, which knows what it looked for: PackStore.table)
            raise StorageError(f"Storage failed for {where}: {shown}") from exc
        raise


def _is_permanent(exc: BaseException, text: str) -> bool:
    """Denials, read-only filesystems, missing buckets: retrying can't help."""
    if isinstance(exc, OSError) and exc.errno in _PERMANENT_ERRNOS:
        return True
    return bool(
        _PERMANENT_STATUS.search(text)
        or _PERMANENT_OS_ERROR.search(text)
        or any(m in text for m in _PERMANENT_MARKERS)
    )


def resolve_root(root: str | os.PathLike[str] | None) -> str:
    """The Pack root: the argument, else ``WOLFIE_ROOT``, else ``./.wolfie``.

    ``file:///path`` is the local folder ``/path``. An empty root is refused rather than
    taken for the working directory, and so is a local root that exists but is not a
    folder (a file, ``/dev/null``).
    """
    if root is None:
        root = os.environ.get("WOLFIE_ROOT") or DEFAULT_ROOT
    text = os.fspath(root)
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise InvalidInput(
            f"Pack root {text!r} is empty or invalid; pass a folder, a file:// URI or "
            "s3://bucket/prefix (or leave it out for WOLFIE_ROOT or ./.wolfie)."
        )
    if is_remote(text):
        return text.rstrip("/")
    if text.startswith("file:"):
        text = _local_path_of(text)
    path = Path(text).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise StorageError(
            f"Pack root {str(path)!r} exists but is not a folder; pass a folder to keep Packs in."
        )
    return str(path)


def _local_path_of(uri: str) -> str:
    """``file:///x`` (or ``file://localhost/x``) as the path ``/x``."""
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost") or not parts.path:
        raise InvalidInput(
            f"Pack root {uri!r}: only local file:// URIs (file:///path) are understood."
        )
    return unquote(parts.path)


def is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def storage_options_from_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Lance ``storage_options`` built from the standard ``AWS_*`` variables."""
    env = os.environ if env is None else env
    options: dict[str, str] = {}
    # Later names in _ENV_TO_OPTION lose to earlier ones (AWS_REGION beats AWS_DEFAULT_REGION).
    for var, option in reversed(list(_ENV_TO_OPTION.items())):
        if env.get(var):
            options[option] = env[var]
    endpoint = options.get("aws_endpoint", "")
    if endpoint.startswith("http://"):
        options["allow_http"] = "true"
    return options


def is_secret_option(name: str) -> bool:
    """True for option names that hold credentials (keys, tokens, passwords)."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def redact(options: Mapping[str, str]) -> dict[str, str]:
    """Storage options safe to print: secrets replaced by ``***``."""
    return {k: ("***" if is_secret_option(k) else v) for k, v in options.items()}


def redact_text(text: str, options: Mapping[str, str]) -> str:
    """``text`` with the value of every secret option replaced by ``***``."""
    for name, value in options.items():
        if value and is_secret_option(name) and len(str(value)) >= 4:
            text = text.replace(str(value), "***")
    return text


_URL_PASSWORD = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")


def redact_url(url: str) -> str:
    """``scheme://user:password@host`` shown as ``scheme://user:***@host``."""
    return _URL_PASSWORD.sub(r"\1:***@", url)


@dataclass(frozen=True)
class PackLocation:
    """Where one Pack's database lives. ``repr`` never shows credentials."""

    name: str
    root: str
    storage_options: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def uri(self) -> str:
        return f"{self.root}/{self.name}"

    def __repr__(self) -> str:
        return (
            f"PackLocation(name={self.name!r}, root={redact_url(self.root)!r}, "
            f"storage_options={redact(self.storage_options)!r})"
        )

    __str__ = __repr__


def locate(
    name: str,
    root: str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> PackLocation:
    """Validate ``name`` and resolve where the Pack lives."""
    check_pack_name(name)
    resolved = resolve_root(root)
    options: dict[str, str] = {}
    if is_remote(resolved):
        options = storage_options_from_env()
        options.update(storage_options or {})
        if options.get("aws_endpoint", "").startswith("http://"):
            options.setdefault("allow_http", "true")
        # Bounded waits: with Lance's defaults an endpoint that accepts connections but
        # never answers blocks for many minutes (measured in tests/packs/test_engine_s3.py).
        for key, value in REMOTE_TIMEOUTS.items():
            options.setdefault(key, value)
    return PackLocation(name=name, root=resolved, storage_options=options)


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

    def table(self, name: str) -> Any:
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

    def open_version(self, name: str, version: int | None = None) -> Any:
        """A handle on ``name`` at ``version`` (time travel), or at the latest commit."""
        if version is None:
            table = self.table(name)
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

    def pin(self, name: str, version: int) -> None:
        """Check ``name`` out at ``version`` for every later read through this handle
        (a reproducible eval); in-process caches stand aside while it is pinned."""
        table = self.table(name)
        with storage_step(self.location, f"check {name!r} out at version {version}"):
            table.checkout(version)
        self._pinned[name] = version

    def pinned(self, name: str) -> bool:
        return name in self._pinned

    def has_table(self, name: str) -> bool:
        return name in self._tables or name in self.table_names()

    def ensure_table(self, name: str, schema: pa.Schema) -> Any:
        """Open ``name``, creating it with ``schema`` first when it is missing."""
        if not self.has_table(name):
            self.require_writable(f"create table {name!r}")
            with storage_step(self.location, f"create table {name!r}"):
                self._db.create_table(name, schema=schema, exist_ok=True)
        return self.table(name)

    def require_writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyPack(
                f"Pack {self.location.name!r} is open read-only; cannot {action}. "
                "Open it with read_only=False to write."
            )

    # --- pack_meta: small JSON values, upserted by key -------------------------------

    def read_meta(self) -> dict[str, Any]:
        table = self.table(schemas.PACK_META)
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
            table = self.table(name)
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
        table = self.table(name)
        builder = table.merge_insert(on)
        if update is True:
            builder = builder.when_matched_update_all()
        elif isinstance(update, str):
            builder = builder.when_matched_update_all(where=update)
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
        table = self.table(name)
        self._commit(
            f"update {name!r}", lambda: table.update(where=in_clause("id", ids), values_sql=values)
        )

    def _commit(self, step: str, write: Callable[[], Any]) -> Any:
        """Run one commit; on write contention (Lance gave up on its own retries: the
        commit did not land) wait with jittered backoff and try again, a bounded number
        of times. Other faults go through :func:`storage_step` unchanged."""
        for attempt in range(CONTENTION_RETRIES + 1):
            try:
                with storage_step(self.location, step):
                    return write()
            except TransientStorageError as exc:
                contended = any(m in str(exc).lower() for m in _CONTENTION_MARKERS)
                if not contended or attempt == CONTENTION_RETRIES:
                    raise
                time.sleep(random.uniform(0.5, 1.5) * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def compact(self, name: str, retention: timedelta | None = None) -> None:
        """Merge small fragments of ``name`` and drop versions older than ``retention``
        (LanceDB's default, 7 days, when None); younger versions stay for time travel."""
        self.require_writable(f"compact {name!r}")
        table = self.table(name)
        with storage_step(self.location, f"compact {name!r}"):
            table.optimize(cleanup_older_than=retention)

    def drop_all(self) -> None:
        """Delete every table of this Pack (used by ``wolfie demo --fresh``)."""
        self.require_writable("drop the Pack")
        with storage_step(self.location, "drop tables"):
            self._db.drop_all_tables()
        self._tables.clear()

    def read_columns(self, name: str, columns: list[str], where: str | None = None) -> pa.Table:
        """Some columns of every row (or of the rows matching ``where``), vectors left out."""
        table = self.table(name)
        with storage_step(self.location, f"read {name!r}"):
            query = table.search().select(columns).limit(max(1, table.count_rows(where)))
            if where:
                query = query.where(where)
            return query.to_arrow()

    def fragment_count(self, name: str) -> int:
        return int(self.table(name).stats()["fragment_stats"]["num_fragments"])
