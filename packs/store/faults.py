"""The one storage fault classifier: LanceDB and object-store (boto) failures become
Wolfie errors that say whether to retry.

Transient faults (refused connections, timeouts, 5xx, throttling, commit conflicts)
become :class:`TransientStorageError`, so Prefect retries them; denials, missing buckets,
read-only filesystems and permission errors (EROFS, EACCES, EPERM: retrying can't help)
become :class:`StorageError`, as does any other filesystem error but a missing file.
Every read and write of a Pack's tables (:mod:`packs.store.gateway`) and of its
ingestion checkpoints (:mod:`packs.ingest.checkpoints`) passes through
:func:`classify_fault`.
"""

from __future__ import annotations

import errno
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from packs.errors import StorageError, TransientStorageError, WolfieError
from packs.store.locations import PackLocation, redact_text, redact_url

_TRANSIENT_MARKERS = (
    "connection refused",
    "failed to connect",
    "timed out",
    "timeout",
    "connection reset",
    "broken pipe",
    "slowdown",
    "slow down",
    "service unavailable",
    "temporarily",
    "dns error",
    "error sending request",
    "commit conflict",
    "retryable",
)
# Lance gives up after 4 attempts when many writers commit to one table at once; the
# commit did not land, so trying again is safe. 5 more tries with backoff from 0.5 s
# (hand-set, measured enough for 8 writers on moto S3 in tests/packs/store/test_concurrency.py).
_CONTENTION_MARKERS = ("too many concurrent writers", "commit conflict")
CONTENTION_RETRIES = 5
# What Lance says of a file that is gone or unreadable (measured on lance 0.40: a deleted
# data file, cleanup under a reader, a truncated, zeroed or scrambled file; a scrambled,
# truncated or emptied manifest, issue 31).
_DAMAGE_MARKERS = (
    "does not appear to be a lance file",
    "corrupt file",
    "outside metadata region",
    "failed to fill whole buffer",
    "file size is too small",
    "failed to decode protobuf message",
    "for object of size 0 bytes",
)
_PERMANENT_MARKERS = (
    "accessdenied",
    "access denied",
    "forbidden",
    "nosuchbucket",
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "not a directory",
)
# A read-only filesystem, a denied path or a file where a folder should be: retrying
# can't help (errno numbers as Lance prints them: "(os error 30)").
_PERMANENT_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR})
_PERMANENT_OS_ERROR = re.compile(r"os error (?:1|13|20|30)\b")
# HTTP status codes match as whole numbers only: "1.169403ms" in a message is not a 403,
# nor is a data file's hex name ("...6e403c.lance", a cleanup race taken for a refusal).
_PERMANENT_STATUS = re.compile(r"(?<![\w.])403(?![\w.])")
_TRANSIENT_STATUS = re.compile(r"(?<![\w.])(?:500|502|503|504)(?![\w.])")


# botocore error codes that mean "try again later" (a ClientError with a status < 500).
_TRANSIENT_CODES = frozenset(
    {"SlowDown", "RequestTimeout", "Throttling", "InternalError", "ServiceUnavailable"}
)


def classify_fault(
    exc: BaseException,
    where: str,
    options: Mapping[str, str] | None = None,
    *,
    missing_file_is_fault: bool = False,
) -> WolfieError | None:
    """The Wolfie error ``exc`` stands for, or None when it is no storage failure (a bug,
    or a missing file the caller looks for: surface it as it is).

    ``where`` names the Pack and the step; the values of secret ``options`` are
    redacted from the message. ``missing_file_is_fault`` makes a missing file a
    :class:`StorageError` too (checkpoint objects are never looked up by failing).
    """
    if isinstance(exc, WolfieError):
        return None
    boto = _boto_fault(exc, where)
    if boto is not None:
        return boto
    if not isinstance(exc, OSError | RuntimeError | ValueError):
        return None
    text = str(exc).lower()
    shown = redact_text(str(exc), options or {})
    if _is_permanent(exc, text):
        return StorageError(f"Storage refused {where}: {shown}")
    if is_damage(exc):
        return TransientStorageError(
            f"A file of {where} is missing or unreadable (another process's cleanup may "
            f"have removed an old version); retry: {shown}"
        )
    transient = _TRANSIENT_STATUS.search(text) or "lanceerror(io)" in text
    if transient or any(marker in text for marker in _TRANSIENT_MARKERS):
        return TransientStorageError(f"Storage unavailable for {where}; retry later: {shown}")
    missing = isinstance(exc, FileNotFoundError) and not missing_file_is_fault
    if isinstance(exc, OSError) and not missing:
        # a local filesystem fault: never a bare OSError
        return StorageError(f"Storage failed for {where}: {shown}")
    return None


def is_damage(exc: BaseException) -> bool:
    """Lance met a file that is missing or unreadable: a file of an old version removed by
    another process's cleanup while this one read it (transient: the latest version has
    its files), or, if it persists there, a deleted or corrupted file."""
    text = str(exc).lower()
    if "not found" in text:  # a generic phrase: only Lance's, about one of its files
        return "lance error" in text or ".lance" in text
    return any(marker in text for marker in _DAMAGE_MARKERS)


def is_contention(exc: BaseException) -> bool:
    """Lance gave up on its own commit retries (many writers on one table): the commit
    did not land, so trying again is safe."""
    return any(marker in str(exc).lower() for marker in _CONTENTION_MARKERS)


@contextmanager
def storage_step(location: PackLocation, step: str) -> Iterator[None]:
    """Run one storage step; a fault leaves as the Wolfie error :func:`classify_fault`
    gives, naming the Pack (password redacted) and the step. Wolfie's own errors, and
    anything that is no storage fault, pass through unchanged."""
    try:
        yield
    except BaseException as exc:
        where = f"Pack {location.name!r} at {redact_url(location.root)!r}, step {step!r}"
        error = classify_fault(exc, where, location.storage_options)
        if error is None:
            raise
        raise error from exc


def _is_permanent(exc: BaseException, text: str) -> bool:
    """Denials, read-only filesystems, missing buckets: retrying can't help."""
    if isinstance(exc, OSError) and exc.errno in _PERMANENT_ERRNOS:
        return True
    return bool(
        _PERMANENT_STATUS.search(text)
        or _PERMANENT_OS_ERROR.search(text)
        or any(m in text for m in _PERMANENT_MARKERS)
    )


def _boto_fault(exc: BaseException, where: str) -> WolfieError | None:
    """A botocore failure anywhere in ``exc``'s chain of causes. botocore is only
    consulted once something imported it: before that, no error can come from it."""
    exceptions = sys.modules.get("botocore.exceptions")
    if exceptions is None:
        return None
    for cause in _causes(exc):
        if isinstance(cause, exceptions.HTTPClientError | exceptions.ConnectionError):
            return TransientStorageError(f"Storage unreachable for {where}; retry later: {exc}")
        if isinstance(cause, exceptions.ClientError):
            error = cause.response.get("Error", {})
            status = int(cause.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
            if status >= 500 or error.get("Code") in _TRANSIENT_CODES:
                return TransientStorageError(f"Storage failed for {where}; retry later: {exc}")
            return StorageError(f"Storage refused {where} ({error.get('Code')}): {exc}")
    return None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
