"""A direct download for an agent's URL: every hop checked against the operator's policy.

yt-dlp (what the CLI uses) follows redirects and reads pages for embedded media on any
host, so it can't be held to an allowlist. An agent's URL is fetched here instead, with
httpcore (httpx's transport), as a direct media link:

- each URL, the first and every redirect (at most :data:`MAX_REDIRECTS`), must match an
  allowed prefix (:meth:`IngestPolicy.check_url`);
- the connection itself resolves the host and connects only to an address the policy
  allows (:func:`packs.ingest.policy.address_allowed`), so a name can't be rebound to a
  private address between the check and the connection; TLS still verifies the name;
- no proxy from the environment is used (a proxy would reach what the check refused);
- the body streams to disk and stops at the media size limit, which a ``Content-Length``
  over it refuses before any byte is read.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import httpcore

from packs.errors import (
    EmptyMedia,
    MediaDownloadError,
    MediaUnreachable,
    SourceNotAllowed,
    SourceNotFound,
)
from packs.ingest.policy import IngestPolicy, address_allowed

MAX_REDIRECTS = 5  # what browsers allow is ~20; a media link needs one or two (hand-set)
_REDIRECTS = (301, 302, 303, 307, 308)
_TRANSIENT = (408, 425, 429, 500, 502, 503, 504)
_CHUNK = 1 << 16
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}$")


class CheckedBackend(httpcore.SyncBackend):
    """Resolve the host, keep the addresses the policy allows, connect to the first."""

    def __init__(self, policy: IngestPolicy) -> None:
        self.policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[object] | None = None,
    ) -> httpcore.NetworkStream:
        name = host.strip("[]")
        try:
            found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise MediaUnreachable(f"Can't resolve {name!r} ({exc}); check the host.") from exc
        explicit = self.policy.explicit_addresses(name)
        allowed = [str(info[4][0]) for info in found if address_allowed(str(info[4][0]), explicit)]
        if not allowed:
            raise SourceNotAllowed(
                f"{name!r} resolves to a private, loopback or link-local address; an agent's "
                "URL may reach one only if the operator's prefix names it by address."
            )
        return super().connect_tcp(
            allowed[0],
            port,
            timeout,
            local_address,
            socket_options,  # type: ignore[arg-type]
        )


def download_checked(
    url: str,
    dest: Path,
    policy: IngestPolicy,
    timeout_s: float,
    on_progress: Callable[[float], None] | None = None,
) -> tuple[Path, str]:
    """Fetch ``url`` into ``dest`` under ``policy``; returns the file and a title."""
    timeouts = {"connect": timeout_s, "read": timeout_s, "write": timeout_s, "pool": timeout_s}
    with httpcore.ConnectionPool(network_backend=CheckedBackend(policy)) as pool:
        for _ in range(MAX_REDIRECTS + 1):
            policy.check_url(url)
            try:
                with pool.stream(
                    "GET",
                    url,
                    headers=[(b"User-Agent", b"wolfie-ingest")],
                    extensions={"timeout": timeouts},
                ) as response:
                    if response.status in _REDIRECTS:
                        url = urljoin(url, _header(response, b"location"))
                        continue
                    _check_status(url, response.status)
                    return _save(url, response, dest, policy, on_progress), _title(url)
            except (httpcore.ConnectError, httpcore.TimeoutException) as exc:
                raise MediaUnreachable(
                    f"Could not reach {url[:120]} ({exc}); check the host, or retry later."
                ) from exc
            except httpcore.ProtocolError as exc:
                raise MediaDownloadError(f"{url[:120]} broke the HTTP protocol: {exc}") from exc
    raise MediaDownloadError(f"{url[:120]} redirected more than {MAX_REDIRECTS} times.")


def _check_status(url: str, status: int) -> None:
    if status in (404, 410):
        raise SourceNotFound(f"{url[:120]} answered HTTP {status}: check the URL.")
    if status in _TRANSIENT:
        raise MediaUnreachable(f"{url[:120]} answered HTTP {status}; retry later.")
    if not 200 <= status < 300:
        raise MediaDownloadError(f"{url[:120]} answered HTTP {status}.")


def _save(
    url: str,
    response: httpcore.Response,
    dest: Path,
    policy: IngestPolicy,
    on_progress: Callable[[float], None] | None,
) -> Path:
    declared = _header(response, b"content-length")
    total = int(declared) if declared.isdigit() else None
    if total is not None:
        policy.check_size(total, url[:120], "media")
    suffix = _SUFFIX.search(urlsplit(url).path)
    path = dest / f"media{suffix.group(0) if suffix else ''}"
    written = 0
    with path.open("wb") as out:
        for block in response.iter_stream():
            written += len(block)
            policy.check_size(written, url[:120], "media")  # a server may lie or not say
            out.write(block)
            if on_progress and total:
                on_progress(min(1.0, written / total))
    if written == 0:
        raise EmptyMedia(f"{url[:120]} returned no data (an empty file).")
    return path


def _header(response: httpcore.Response, name: bytes) -> str:
    for key, value in response.headers:
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip()
    return ""


def _title(url: str) -> str:
    name = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
    return _SUFFIX.sub("", name) or urlsplit(url).hostname or "media"
