"""What a caller may ingest: an http(s) URL or a local file, checked before any I/O.

A source is refused early, with the fix in the message, when it can never succeed:
another scheme (``file://``, ``ftp://``), an absurdly long or malformed URL, a path that
names a folder. Whether the URL answers, or the file is media, is found out later.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from packs.errors import SourceNotFound, UnsupportedSource
from packs.store.rows import stable_hash

# Browsers and CDNs commonly cap URLs near 2-8 KB; a longer "URL" is a pasted blob,
# not an address (hand-set).
MAX_URL_CHARS = 4096
URL_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class MediaSource:
    """One item to ingest. ``location`` is the URL, or the absolute path of a local file."""

    location: str
    is_url: bool

    @property
    def key(self) -> str:
        """A stable key for this source, used to find a previous download of it."""
        return stable_hash("url" if self.is_url else "path", self.location)

    @property
    def display(self) -> str:
        return self.location if self.is_url else Path(self.location).name


def parse_source(value: object) -> MediaSource:
    """Check ``value`` and tell URLs from local paths; raise a clear error when unusable."""
    if not isinstance(value, str | os.PathLike):
        raise UnsupportedSource(f"A media source must be a URL or a path, got {value!r}.")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise UnsupportedSource("A media source is empty: give an http(s) URL or a file path.")
    text = text.strip()
    if "://" in text:
        return MediaSource(check_url(text), is_url=True)
    return MediaSource(str(check_path(text)), is_url=False)


def check_url(url: str) -> str:
    if len(url) > MAX_URL_CHARS:
        raise UnsupportedSource(
            f"URL of {len(url):,} characters starting {url[:60]!r}... is longer than "
            f"{MAX_URL_CHARS:,}; that is not a media address. Check what was pasted."
        )
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise UnsupportedSource(
            f"URL {url[:120]!r} contains whitespace or control characters; "
            "percent-encode them (%20) or quote the URL in the shell."
        )
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        raise UnsupportedSource(
            f"file:// URLs are not fetched ({url[:120]!r}); pass the local path itself "
            f"(for example {parts.path!r})."
        )
    if scheme not in URL_SCHEMES:
        raise UnsupportedSource(
            f"Unsupported URL scheme {scheme!r} in {url[:120]!r}: only http:// and https:// "
            "are downloaded. Fetch the file yourself and pass its local path."
        )
    if not parts.hostname:
        raise UnsupportedSource(f"URL {url[:120]!r} has no host name.")
    return url


def check_path(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.exists():
        raise SourceNotFound(
            f"No file at {str(path)!r}. Check the path (relative paths are taken from "
            f"{os.getcwd()!r})."
        )
    if path.is_dir():
        raise UnsupportedSource(
            f"{str(path)!r} is a folder; pass the media files in it one by one "
            "(documents go through the documents flow)."
        )
    try:
        return path.resolve()
    except OSError as exc:  # a link swapped while it was resolved (EINVAL, ELOOP)
        raise SourceNotFound(f"{str(path)!r} can't be resolved ({exc.strerror}).") from None
