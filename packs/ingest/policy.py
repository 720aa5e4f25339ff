"""What an agent may ingest: the folders and URL prefixes an operator allowed, and how
large a source may be. Checks, and the one way a run opens an agent's file.

``wolfie mcp --ingest-root DIR --ingest-url-prefix URL`` builds an :class:`IngestPolicy`;
the server checks every source an agent names before a run starts, and the run checks
again, file by file and hop by hop, as it reads. A file is read only through
:meth:`IngestPolicy.open_file`: it opens the resolved path once, component by component
from the allowed root, each with ``O_NOFOLLOW``, and checks the open descriptor (a
regular file, within the size limit), so a symlink swapped in after the check is refused
instead of followed (issue 31). The CLI, run by a person, ingests without a policy.

- **Paths** are resolved (``~``, ``..``, symlinks) before the check and must lie under an
  allowed root. A hidden file or folder (a name starting with ``.``, as ``.ssh`` or
  ``.env``) under a root is refused when named, and skipped when a folder is walked:
  operators keep secrets and tool state there, not documents.
- **URLs** must match a prefix by parts, not by text: the same scheme, host and port, and
  a path at or below the prefix's (``/media`` allows ``/media/a.mp3``, not
  ``/media-private``); user info, ``.``/``..`` segments and encoded slashes are refused.
- **Addresses**: a host must resolve to public addresses only
  (:func:`address_allowed`). Private, loopback and link-local addresses (``localhost``,
  ``127.1``, ``0.0.0.0``, ``[::1]``, ``2130706433`` and names that resolve to them) are
  refused unless a prefix names that host by its address, or as ``localhost``. A name is
  checked at connection time, so DNS can't switch it to a private address after the
  check (:mod:`packs.ingest.guarded_download`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import posixpath
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import SplitResult, unquote, urlsplit

from packs.errors import InvalidInput, SourceNotAllowed, SourceTooLarge

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
# Text at 1 MB becomes ~37 MB of RSS while it is chunked and embedded (an 84 MB file
# grew to 3.1 GiB, issue 23): 16 MiB keeps one document near 600 MB (hand-set).
DEFAULT_MAX_DOCUMENT_BYTES = 16 << 20
# An hour of video at a common 2-4 Mbit/s is 1-2 GB; audio is far less (hand-set).
DEFAULT_MAX_MEDIA_BYTES = 2 << 30


@dataclass(frozen=True)
class UrlPrefix:
    scheme: str
    host: str  # lower case; an IPv6 address without brackets
    port: int
    path: str  # ends with "/"
    addresses: tuple[str, ...]  # the private addresses this prefix names explicitly

    def matches(self, parts: SplitResult) -> bool:
        path = parts.path or "/"
        return (
            parts.scheme.lower() == self.scheme
            and (parts.hostname or "") == self.host
            and _port(parts) == self.port
            and (path + "/").startswith(self.path)
        )


@dataclass(frozen=True)
class IngestPolicy:
    """Allowed folders (resolved) and URL prefixes, and the size limits per source."""

    roots: tuple[str, ...] = ()
    url_prefixes: tuple[str, ...] = ()
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    max_media_bytes: int = DEFAULT_MAX_MEDIA_BYTES

    @classmethod
    def build(
        cls,
        roots: Iterable[str] = (),
        url_prefixes: Iterable[str] = (),
        max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
        max_media_bytes: int = DEFAULT_MAX_MEDIA_BYTES,
    ) -> IngestPolicy:
        """Check the operator's flags: each root an existing folder, each prefix an
        http(s) URL with a host and nothing after its path."""
        resolved = []
        for root in roots:
            path = Path(os.path.realpath(Path(root).expanduser()))
            if not path.is_dir():
                raise InvalidInput(f"--ingest-root {root!r} is not a folder.")
            resolved.append(str(path))
        prefixes = tuple(url_prefixes)
        for prefix in prefixes:
            parse_prefix(prefix)
        for name, value in (("document", max_document_bytes), ("media", max_media_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"The {name} size limit must be a positive int, not {value!r}.")
        return cls(tuple(dict.fromkeys(resolved)), prefixes, max_document_bytes, max_media_bytes)

    @property
    def allows_anything(self) -> bool:
        return bool(self.roots or self.url_prefixes)

    def describe(self) -> str:
        """What an agent may ingest, in one sentence."""
        if not self.allows_anything:
            return "nothing: the operator allowed no folder and no URL prefix"
        parts = [f"files under {', '.join(self.roots)}"] if self.roots else []
        if self.url_prefixes:
            parts.append(f"URLs starting {', '.join(self.url_prefixes)}")
        return " and ".join(parts)

    def check_source(self, source: str) -> str:
        """``source`` if it is allowed (a URL as given, a path resolved), else raise."""
        if not self.allows_anything:
            raise SourceNotAllowed(
                "This server allows no ingest: the operator starts it with --ingest-root DIR "
                "and/or --ingest-url-prefix URL to allow some."
            )
        if "://" in source:
            return self.check_url(source)
        return str(self.check_path(source))

    def check_path(self, text: str) -> Path:
        """The resolved path if it lies under an allowed root and is not hidden there."""
        try:
            path = Path(os.path.realpath(Path(text).expanduser()))
        except OSError as exc:  # a link swapped while it was resolved (EINVAL, ELOOP)
            raise SourceNotAllowed(f"{text!r} can't be resolved ({exc.strerror}).") from None
        for root in map(Path, self.roots):
            if path == root or root in path.parents:
                if any(part.startswith(".") for part in path.relative_to(root).parts):
                    raise SourceNotAllowed(
                        f"{text!r} is a hidden file or lies in a hidden folder; those are "
                        "never ingested for an agent."
                    )
                return path
        raise SourceNotAllowed(
            f"{text!r} is not under a folder this server may ingest from "
            f"({', '.join(self.roots) or 'none'})."
        )

    @contextlib.contextmanager
    def open_file(self, text: str, kind: str) -> Iterator[tuple[BinaryIO, Path]]:
        """The allowed file ``text`` open for reading, and its resolved path: opened once,
        each component from its allowed root with ``O_NOFOLLOW`` (a symlink anywhere is
        refused, not followed), then the descriptor itself checked: a regular file within
        the ``kind`` ("document" or "media") size limit."""
        path = self.check_path(text)
        root = next(Path(r) for r in self.roots if path == Path(r) or Path(r) in path.parents)
        fd = _open_beneath(root, path.relative_to(root).parts, text)
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise SourceNotAllowed(f"{text!r} is not a regular file; only files are ingested.")
            self.check_size(found.st_size, text, kind)
            handle = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with handle:
            yield handle, path

    def check_url(self, url: str) -> str:
        """``url`` if it matches an allowed prefix by scheme, host, port and path."""
        from packs.ingest.sources import check_url  # loads the store: not for `wolfie --help`

        parts = urlsplit(check_url(url))
        if parts.username is not None or parts.password is not None:
            raise SourceNotAllowed(f"URL {url[:120]!r} carries user info; it is never fetched.")
        raw = parts.path.lower()
        segments = unquote(parts.path).split("/")
        if "%2f" in raw or "%5c" in raw or "\\" in parts.path or {".", ".."} & set(segments):
            raise SourceNotAllowed(
                f"URL {url[:120]!r} has '.', '..' or encoded slashes in its path; "
                "pass the plain address."
            )
        if not any(parse_prefix(prefix).matches(parts) for prefix in self.url_prefixes):
            raise SourceNotAllowed(
                f"URL {url[:120]!r} does not start with a prefix this server may fetch "
                f"({', '.join(self.url_prefixes) or 'none'})."
            )
        return url

    def explicit_addresses(self, host: str) -> tuple[IpAddress, ...]:
        """The private addresses a prefix names for ``host`` (its IP literal, or loopback
        for ``localhost``); none for a DNS name."""
        named = [parse_prefix(p) for p in self.url_prefixes]
        found = {a for prefix in named if prefix.host == host.lower() for a in prefix.addresses}
        return tuple(ipaddress.ip_address(a) for a in sorted(found))

    def check_size(self, size: int, name: str, kind: str) -> None:
        limit = self.max_document_bytes if kind == "document" else self.max_media_bytes
        if size > limit:
            raise SourceTooLarge(
                f"{name!r} is {size:,} bytes, above this server's {kind} limit of {limit:,} "
                "bytes; the operator can ingest it with `wolfie ingest`."
            )


def _open_beneath(root: Path, parts: Sequence[str], text: str) -> int:
    """A descriptor of ``root / parts``, every component opened relative to the one
    before with ``O_NOFOLLOW``; a component that is a symlink now (swapped in after the
    path was resolved) is :class:`SourceNotAllowed`."""
    nofollow = os.O_NOFOLLOW | os.O_CLOEXEC
    current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = nofollow | os.O_RDONLY | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                opened = os.open(part, flags, dir_fd=current)
            except OSError as exc:  # ELOOP/ENOTDIR: a symlink now; ENOENT: gone
                raise SourceNotAllowed(
                    f"{text!r} changed while it was opened (a link or a missing part: "
                    f"{exc.strerror}); it is not read."
                ) from None
            os.close(current)
            current = opened
    except BaseException:
        os.close(current)
        raise
    return current


def parse_prefix(prefix: str) -> UrlPrefix:
    """An ``--ingest-url-prefix`` as parts; refuse one that could match more than meant."""
    parts = urlsplit(prefix)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise InvalidInput(f"--ingest-url-prefix {prefix!r} must be an http(s) URL with a host.")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InvalidInput(
            f"--ingest-url-prefix {prefix!r} must not carry user info, a query or a fragment."
        )
    host = parts.hostname
    path = posixpath.normpath(parts.path or "/")
    path = path if path.endswith("/") else path + "/"
    addresses: Sequence[IpAddress] = _LOOPBACK if host == "localhost" else ()
    with contextlib.suppress(ValueError):  # a name, not an address
        addresses = (ipaddress.ip_address(host),)
    return UrlPrefix(scheme, host, _port(parts), path, tuple(str(a) for a in addresses))


def address_allowed(address: str, explicit: Sequence[IpAddress] = ()) -> bool:
    """A public unicast address, or one of the ``explicit`` addresses a prefix names.
    An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is judged as its IPv4 address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip in explicit:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _port(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError as exc:
        raise SourceNotAllowed(f"URL {parts.geturl()[:120]!r} has an invalid port.") from exc
    return port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
