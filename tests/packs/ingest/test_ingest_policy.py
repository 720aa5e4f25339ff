"""An agent's ingest policy (packs/ingest/policy.py) and its direct download
(packs/ingest/guarded_download.py): unit tests of the checks, and real downloads from a
local HTTP server. The MCP door itself is tested in tests/wolfie/test_mcp_ingest_policy.py."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from packs.errors import InvalidInput, SourceNotAllowed, SourceNotFound, SourceTooLarge
from packs.ingest.guarded_download import download_checked
from packs.ingest.policy import IngestPolicy, address_allowed, parse_prefix
from tests.support.media import loopback_name, serve


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("127.0.0.2", False),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:169.254.169.254", False),
    ],
)
def test_only_public_unicast_addresses_are_allowed(address: str, allowed: bool):
    assert address_allowed(address) is allowed


def test_a_prefix_names_private_addresses_only_by_address_or_localhost():
    assert parse_prefix("http://127.0.0.1:8000/media").addresses == ("127.0.0.1",)
    assert parse_prefix("http://[::1]:8000/").addresses == ("::1",)
    assert set(parse_prefix("http://localhost/").addresses) == {"127.0.0.1", "::1"}
    assert parse_prefix("http://wiki.internal/").addresses == ()  # names must be public
    policy = IngestPolicy.build(url_prefixes=["http://127.0.0.1:8000/media/"])
    assert address_allowed("127.0.0.1", policy.explicit_addresses("127.0.0.1"))
    assert not address_allowed("127.0.0.1", policy.explicit_addresses("vm"))


@pytest.mark.parametrize(
    "prefix",
    [
        "ftp://host/",
        "http:///x",
        "http://user:pw@host/",
        "http://host/?q=1",
        "http://host/#f",
        "/local/folder",
    ],
)
def test_a_bad_prefix_is_refused_at_start(prefix: str):
    with pytest.raises(InvalidInput, match="ingest-url-prefix"):
        IngestPolicy.build(url_prefixes=[prefix])


def test_urls_match_a_prefix_by_parts_not_by_text():
    policy = IngestPolicy.build(url_prefixes=["https://media.example.com/talks"])
    assert policy.check_url("https://media.example.com/talks/a.mp3")
    assert policy.check_url("https://MEDIA.example.com:443/talks/a.mp3")  # same host, port
    for url in [
        "https://media.example.com/talks-private/a.mp3",
        "https://media.example.com.evil.net/talks/a.mp3",
        "https://media.example.com@evil.net/talks/a.mp3",
        "http://media.example.com/talks/a.mp3",  # another scheme
        "https://media.example.com:8443/talks/a.mp3",
        "https://media.example.com/talks/%2e%2e/admin",
        "https://media.example.com/talks/..%2Fadmin",
    ]:
        with pytest.raises(SourceNotAllowed):
            policy.check_url(url)


def test_paths_are_resolved_before_the_check(tmp_path: Path):
    root, outside = tmp_path / "docs", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    (root / "sub" / "guide.md").write_text("x")
    (root / "link.md").symlink_to(outside / "secret.md")
    (root / "linked-dir").symlink_to(outside)
    policy = IngestPolicy.build(roots=[str(root)])
    assert (
        policy.check_path(str(root / "sub" / ".." / "sub" / "guide.md"))
        == (root / "sub" / "guide.md").resolve()
    )
    for bad in [
        root / "link.md",
        root / "linked-dir" / "secret.md",
        root / ".." / "outside",
        root / ".git" / "config.md",
        root / "sub" / ".env",
    ]:
        with pytest.raises(SourceNotAllowed):
            policy.check_path(str(bad))
    with pytest.raises(SourceNotAllowed, match="allows no ingest"):
        IngestPolicy().check_source(str(root / "sub" / "guide.md"))


def test_a_direct_download_stays_within_the_policy_and_the_size_limit(tmp_path: Path):
    site = tmp_path / "site"
    (site / "media").mkdir(parents=True)
    (site / "media" / "talk.wav").write_bytes(b"RIFF" + bytes(5_000))
    dest = tmp_path / "dest"
    dest.mkdir()
    with serve(site) as base:
        named = IngestPolicy.build(url_prefixes=[f"{base}/media/"])  # loopback, by address
        path, title = download_checked(f"{base}/media/talk.wav", dest, named, 10)
        assert path.read_bytes() == (site / "media" / "talk.wav").read_bytes()
        assert title == "talk"
        small = IngestPolicy.build(url_prefixes=[f"{base}/media/"], max_media_bytes=1_000)
        with pytest.raises(SourceTooLarge, match="5,004 bytes"):  # by its Content-Length
            download_checked(f"{base}/media/talk.wav", dest, small, 10)
        host, port = loopback_name(), base.rsplit(":", 1)[1]
        if host is None:
            pytest.skip("no host name resolving to loopback on this machine")
        by_name = IngestPolicy.build(url_prefixes=[f"http://{host}:{port}/media/"])
        with pytest.raises(SourceNotAllowed, match="loopback"):  # a name, not an address
            download_checked(f"http://{host}:{port}/media/talk.wav", dest, by_name, 10)


def test_a_body_without_a_length_stops_at_the_size_limit(tmp_path: Path):
    """A server that sends no Content-Length is cut off once the limit is passed."""

    class Endless(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()  # no length: the body runs until the connection closes
            with contextlib.suppress(OSError):
                for _ in range(1_000):
                    self.wfile.write(bytes(64_000))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    policy = IngestPolicy.build(url_prefixes=[f"{base}/"], max_media_bytes=200_000)
    try:
        with pytest.raises(SourceTooLarge, match="200,000"):
            download_checked(f"{base}/stream.mp3", tmp_path, policy, 10)
    finally:
        server.shutdown()
        server.server_close()


def _swapper(path: Path, secret: Path, stop: threading.Event) -> None:
    """Swap ``path`` between a document and a symlink to ``secret``, as fast as it can."""
    while not stop.is_set():
        link = path.with_name(".swap-link")
        link.unlink(missing_ok=True)
        link.symlink_to(secret)
        link.replace(path)  # the link now
        plain = path.with_name(".swap-plain")
        plain.write_text("# Notes\n\nThe release checklist.\n")
        plain.replace(path)  # the document again


@pytest.mark.parametrize("kind", ["document", "media"])
def test_a_file_swapped_for_a_symlink_is_never_read(tmp_path: Path, kind: str):
    """Bug (issue 31, item 11): agent document ingest checked the path, then opened it
    again by name; swapping the file for a symlink to a host file between the two won
    3-37 times in 3,000 reads. The run now opens the resolved path once, each component
    with O_NOFOLLOW, and checks the open descriptor."""
    from packs.ingest.documents import read_document
    from packs.ingest.download import fetch
    from packs.ingest.sources import parse_source

    root = tmp_path / "allowed"
    root.mkdir()
    secret = tmp_path / "host-secret.md"
    secret.write_text("# Secret\n\nSECRET-TOKEN-1234\n")
    doc = root / "notes.md"
    doc.write_text("# Notes\n\nThe release checklist.\n")
    policy = IngestPolicy.build([str(root)])
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(doc, secret, stop), daemon=True)
    thread.start()
    leaked = read = refused = 0
    try:
        for _ in range(3_000):
            try:
                if kind == "document":
                    text = " ".join(c.text for c in read_document(doc, "notes.md", policy=policy))
                else:
                    fetched = fetch(parse_source(str(doc)), tmp_path / "work", policy=policy)
                    text = fetched.path.read_text()
            except (SourceNotAllowed, SourceNotFound):  # the path changed under the check
                refused += 1
                continue
            read += 1
            leaked += "SECRET-TOKEN" in text
    finally:
        stop.set()
        thread.join(timeout=10)
    print(f"{kind}: {read} reads, {refused} refused, {leaked} leaked")
    assert leaked == 0 and read > 0 and refused > 0
