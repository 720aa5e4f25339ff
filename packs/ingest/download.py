"""Fetch a media source to a local file and name it by its content hash.

URLs go through yt-dlp (direct media links, and the sites yt-dlp knows); local files
are taken as they are, without a copy. The media id is the BLAKE2b-128 hash of the
file's bytes, so the same recording fetched twice, from anywhere, is one media item.
yt-dlp's failures become Wolfie errors: 404 -> :class:`SourceNotFound`, refused or
timed-out connections and 5xx -> :class:`MediaUnreachable` (transient), a page with
no media -> :class:`NotMedia`, no bytes -> :class:`EmptyMedia`. Under an agent's
:class:`~packs.ingest.policy.IngestPolicy` a URL is a direct link fetched hop by hop
within the policy (:mod:`packs.ingest.guarded_download`), and a file must lie where
the policy allows; both are held to its media size limit.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packs.errors import (
    EmptyMedia,
    MediaDownloadError,
    MediaUnreachable,
    NotMedia,
    SourceNotFound,
    WolfieError,
)
from packs.ingest.policy import IngestPolicy
from packs.ingest.sources import MediaSource

log = logging.getLogger(__name__)

ProgressFn = Callable[[float], None]
_HASH_BLOCK = 1 << 20
_NOT_FOUND = (404, 410)
_ERRNO = re.compile(r"\[Errno -?\d+\][^)\"']*|[Rr]ead timed out|timed out")
_TRANSIENT_HTTP = (408, 425, 429, 500, 502, 503, 504)


@dataclass(frozen=True)
class FetchedFile:
    """A media file on local disk. ``downloaded`` is False for a caller's own file."""

    path: Path
    source: MediaSource
    title: str
    media_id: str
    size: int
    downloaded: bool


def media_id_of(path: Path) -> str:
    """The content hash that names a media item: BLAKE2b, 128 bits, hex."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def fetch(
    source: MediaSource,
    work_dir: Path,
    *,
    socket_timeout_s: float = 20.0,
    max_bytes: int | None = None,
    on_progress: ProgressFn | None = None,
    policy: IngestPolicy | None = None,
) -> FetchedFile:
    """Download ``source`` into ``work_dir`` (URLs) or take it in place (paths); under a
    ``policy``, only what it allows."""
    if source.is_url:
        dest = work_dir / f"download-{source.key[:16]}"
        shutil.rmtree(dest, ignore_errors=True)  # a partial file of a killed run
        dest.mkdir(parents=True, exist_ok=True)
        if policy is None:
            path, title = download_url(
                source.location, dest, socket_timeout_s, max_bytes, on_progress
            )
        else:
            from packs.ingest.guarded_download import download_checked

            path, title = download_checked(
                source.location, dest, policy, socket_timeout_s, on_progress
            )
    elif policy is None:
        path = Path(source.location)
        title = path.stem
    else:  # an agent's file: copied from the one checked descriptor (policy.open_file)
        path, title = _copy_checked(source, work_dir, policy)
    size = path.stat().st_size
    if policy is not None:
        policy.check_size(size, source.display, "media")
    if size == 0:
        raise EmptyMedia(f"{source.display!r} is an empty file (0 bytes); nothing to ingest.")
    return FetchedFile(path, source, title, media_id_of(path), size, path != Path(source.location))


def _copy_checked(source: MediaSource, work_dir: Path, policy: IngestPolicy) -> tuple[Path, str]:
    """An agent's media file, read from the descriptor :meth:`IngestPolicy.open_file`
    checked, copied into the run's work folder: what is transcribed later is what was
    checked, whatever the path points to by then."""
    dest = work_dir / f"file-{source.key[:16]}"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    with policy.open_file(source.location, "media") as (handle, resolved):
        copy = dest / resolved.name
        with copy.open("wb") as out:
            shutil.copyfileobj(handle, out, _HASH_BLOCK)
    return copy, resolved.stem


def download_url(
    url: str,
    dest: Path,
    socket_timeout_s: float,
    max_bytes: int | None,
    on_progress: ProgressFn | None,
) -> tuple[Path, str]:
    """One yt-dlp download into ``dest``; returns the file and the media's title."""
    import yt_dlp

    options: dict[str, Any] = {
        "outtmpl": str(dest / "media.%(ext)s"),
        "format": "bestaudio/best",  # sites with separate streams: audio only
        "noplaylist": True,
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "logger": _QuietLogger(),
        "socket_timeout": socket_timeout_s,
        "retries": 2,  # yt-dlp's own quick retries; Prefect retries the whole step later
        "fragment_retries": 2,
        "extractor_retries": 1,
        "cachedir": False,
        "overwrites": True,
        "progress_hooks": [_progress_hook(on_progress)] if on_progress else [],
    }
    if max_bytes is not None:
        options["max_filesize"] = max_bytes
    try:
        with yt_dlp.YoutubeDL(options) as ydl:
            info = ydl.extract_info(url, download=True)
    except yt_dlp.utils.DownloadError as exc:
        raise download_error(url, exc) from exc
    files = [Path(d["filepath"]) for d in (info or {}).get("requested_downloads") or []]
    files = [f for f in files if f.is_file()] or sorted(p for p in dest.iterdir() if p.is_file())
    if not files:
        if max_bytes is not None:
            raise MediaDownloadError(f"{url[:120]!r} is larger than max_bytes={max_bytes:,}.")
        raise EmptyMedia(f"{url[:120]!r} gave no file to download.")
    return files[0], str((info or {}).get("title") or files[0].stem)


def download_error(url: str, exc: Exception) -> WolfieError:
    """The Wolfie error for a yt-dlp failure, by its cause, then by its message."""
    from yt_dlp.networking.exceptions import HTTPError, TransportError
    from yt_dlp.utils import UnsupportedError

    cause = (getattr(exc, "exc_info", None) or (None, None))[1]
    text = str(exc).removeprefix("ERROR: ")
    shown = url if len(url) <= 120 else url[:117] + "..."
    if isinstance(cause, HTTPError):
        if cause.status in _NOT_FOUND:
            return SourceNotFound(f"{shown} answered HTTP {cause.status}: check the URL.")
        if cause.status in _TRANSIENT_HTTP:
            return MediaUnreachable(f"{shown} answered HTTP {cause.status}; retry later.")
        return MediaDownloadError(f"{shown} answered HTTP {cause.status}: {text}")
    if isinstance(cause, TransportError) or "timed out" in text.lower():
        errno = _ERRNO.search(str(cause or text))
        reason = errno.group(0).strip() if errno else str(cause or text)[:200]
        return MediaUnreachable(
            f"Could not reach {shown} ({reason}). Check the host and port, or retry later."
        )
    if isinstance(cause, UnsupportedError) or "unsupported url" in text.lower():
        return NotMedia(f"{shown} is not a media file nor a page with media that yt-dlp can read.")
    if "did not get any data" in text.lower():
        return EmptyMedia(f"{shown} returned no data (an empty file).")
    return MediaDownloadError(f"Downloading {shown} failed: {text}")


def _progress_hook(on_progress: ProgressFn) -> Callable[[dict[str, Any]], None]:
    def hook(status: dict[str, Any]) -> None:
        total = status.get("total_bytes") or status.get("total_bytes_estimate")
        if status.get("status") == "downloading" and total:
            on_progress(min(1.0, float(status.get("downloaded_bytes") or 0) / float(total)))

    return hook


class _QuietLogger:
    """yt-dlp logs here at debug level; its errors come back as exceptions instead."""

    def debug(self, message: str) -> None:
        log.debug("yt-dlp: %s", message)

    def info(self, message: str) -> None:
        log.debug("yt-dlp: %s", message)

    def warning(self, message: str) -> None:
        log.debug("yt-dlp warning: %s", message)

    def error(self, message: str) -> None:
        log.debug("yt-dlp error: %s", message)
