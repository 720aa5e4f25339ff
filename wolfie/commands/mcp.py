"""``wolfie mcp``: serve a Pack to agent hosts over MCP (stdio, or streamable HTTP).

Over HTTP every request must carry ``Authorization: Bearer $WOLFIE_MCP_TOKEN``; the
server refuses to start on a non-loopback address without a token. Nothing but the MCP
protocol is written to stdout in stdio mode: logs go to stderr. An agent ingests only
from the folders and URL prefixes named here (``packs/ingest/policy.py``).
"""

from __future__ import annotations

import ipaddress
import os
from typing import Annotated

import typer

from packs.errors import InvalidInput
from packs.ingest.policy import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_MEDIA_BYTES,
    IngestPolicy,
)
from wolfie.commands.options import PackArg, RootArg
from wolfie.mcp import catalog
from wolfie.mcp.ingest_runs import DEFAULT_MAX_RUNS
from wolfie.mcp.lesson_limits import LessonLimits

TOKEN_ENV = "WOLFIE_MCP_TOKEN"
HELP = (
    "Serve a Pack to agent hosts over MCP: stdio by default, or streamable HTTP. Agents "
    "ingest nothing unless --ingest-root or --ingest-url-prefix allows it."
)
READS = ", ".join(t.name for t in catalog.served(read_only=True))


def parse_http(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port)."""
    host, sep, port_text = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise InvalidInput(
            f"--http takes HOST:PORT (port 0: any free one), e.g. 127.0.0.1:8765, not {address!r}."
        )
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    @app.command(
        short_help="Serve a Pack to agent hosts over MCP: stdio, or streamable HTTP.",
        help=f"{HELP}\n\n{catalog.help_text()}",
    )
    def mcp(
        pack: PackArg,
        root: RootArg = None,
        read_only: Annotated[
            bool, typer.Option("--read-only", help=f"Only the read tools ({READS}).")
        ] = False,
        scope: Annotated[
            str | None,
            typer.Option(help="Pin every call to this user or session scope."),
        ] = None,
        http: Annotated[
            str | None,
            typer.Option(
                help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; "
                f"requests need 'Authorization: Bearer ${TOKEN_ENV}'."
            ),
        ] = None,
        ingest_root: Annotated[
            list[str] | None,
            typer.Option(help="A folder agents may ingest files from (repeatable)."),
        ] = None,
        ingest_url_prefix: Annotated[
            list[str] | None,
            typer.Option(
                help="A URL prefix agents may ingest from (repeatable); a private or "
                "loopback host only when named by its address or as localhost."
            ),
        ] = None,
        max_ingest_runs: Annotated[
            int, typer.Option(min=1, max=64, help="Ingest runs at once.")
        ] = DEFAULT_MAX_RUNS,
        max_document_mb: Annotated[
            int, typer.Option(min=1, help="Largest document file an agent may ingest.")
        ] = DEFAULT_MAX_DOCUMENT_BYTES >> 20,
        max_media_mb: Annotated[
            int, typer.Option(min=1, help="Largest media file or download an agent may ingest.")
        ] = DEFAULT_MAX_MEDIA_BYTES >> 20,
        lesson_rate: Annotated[
            int,
            typer.Option(
                min=0,
                max=600,
                help="Lessons a minute the server may ask of each sampling client's model "
                "after a reward (0: never ask; the template and batch writers remain).",
            ),
        ] = LessonLimits.per_minute,
        lesson_timeout: Annotated[
            float,
            typer.Option(min=1.0, max=600.0, help="Seconds to wait for a client's lesson."),
        ] = LessonLimits.timeout_s,
    ) -> None:
        """Serve a Pack to agent hosts over MCP (help: HELP and the tool catalog). A client
        that declares sampling is asked for the lessons its rewards earned, within
        --lesson-rate and --lesson-timeout."""
        from wolfie.mcp.runtime import IngestLimits, serve_http, serve_stdio

        root = root or os.environ.get("WOLFIE_ROOT")
        policy = IngestPolicy.build(
            ingest_root or (), ingest_url_prefix or (), max_document_mb << 20, max_media_mb << 20
        )
        lessons = LessonLimits(
            enabled=lesson_rate > 0, per_minute=lesson_rate, timeout_s=lesson_timeout
        )
        ingest = IngestLimits(policy, max_ingest_runs, lessons)
        if http is None:
            serve_stdio(pack, root, read_only=read_only, scope=scope, ingest=ingest)
            return
        host, port = parse_http(http)
        token = os.environ.get(TOKEN_ENV) or None
        if token is None and not is_loopback(host):
            raise InvalidInput(
                f"Refusing to serve MCP on {host} without a token: set {TOKEN_ENV}, "
                "or bind 127.0.0.1."
            )
        serve_http(pack, root, host, port, token, read_only=read_only, scope=scope, ingest=ingest)
