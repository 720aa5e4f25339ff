"""Where a Pack lives: its root, its name and the storage options to reach it.

A Pack is one LanceDB database: ``<root>/<name>``. The root is a local folder
(default ``./.wolfie``, overridable by ``WOLFIE_ROOT``) or ``s3://bucket/prefix`` on any
S3-compatible endpoint. S3 settings come from explicit ``storage_options`` or from the
standard ``AWS_*`` environment variables, read here at open time, never at import.
Secrets never reach a ``repr`` or an error message (:func:`redact`, :func:`redact_text`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packs.errors import InvalidInput, StorageError
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
# The object stores a Pack root may name (docs/durability.md); Lance also knows memory://,
# which keeps nothing after the process ends, and ftp:// or http:// are no storage.
REMOTE_SCHEMES = ("s3",)
# Linux's PATH_MAX and NAME_MAX: a longer local root can't be created.
MAX_ROOT_CHARS = 4096
MAX_NAME_CHARS = 255


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
        scheme = text.split("://", 1)[0].lower()
        if scheme not in REMOTE_SCHEMES:
            raise InvalidInput(
                f"Pack root {_shown(text)!r}: {scheme}:// is not a storage Wolfie keeps Packs "
                "in; pass a local folder or s3://bucket/prefix."
            )
        return text.rstrip("/")
    if text.startswith("file:"):
        text = _local_path_of(text)
    if len(text) > MAX_ROOT_CHARS or any(len(part) > MAX_NAME_CHARS for part in Path(text).parts):
        raise InvalidInput(
            f"Pack root {_shown(text)!r} ({len(text):,} characters) is longer than a path "
            f"can be ({MAX_ROOT_CHARS} characters, {MAX_NAME_CHARS} a folder name)."
        )
    path = Path(text).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise StorageError(
            f"Pack root {str(path)!r} exists but is not a folder; pass a folder to keep Packs in."
        )
    return str(path)


def _shown(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def make_local_folder(location: PackLocation) -> None:
    """Create a local Pack's folder (nothing for an object store), or raise a
    :class:`StorageError` saying why it can't be (``/proc``, a read-only disk)."""
    if is_remote(location.uri):
        return
    try:
        Path(location.uri).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"Can't create Pack {location.name!r} under {_shown(location.root)!r}: "
            f"{exc.strerror or exc}. Pass a folder you can write to (--root or WOLFIE_ROOT)."
        ) from exc


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
        # never answers blocks for many minutes (measured in tests/packs/store/test_engine_s3.py).
        for key, value in REMOTE_TIMEOUTS.items():
            options.setdefault(key, value)
    return PackLocation(name=name, root=resolved, storage_options=options)
