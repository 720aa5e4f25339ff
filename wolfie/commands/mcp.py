"""``wolfie mcp``: serve a Pack to agent hosts over MCP (stdio, or streamable HTTP).

Over HTTP every request must carry ``Authorization: Bearer $WOLFIE_MCP_TOKEN``; the
server refuses to start on a non-loopback address without a token. Nothing but the MCP
protocol is written to stdout in stdio mode: logs go to stderr.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Annotated

import typer

from packs.errors import InvalidInput

TOKEN_ENV = "WOLFIE_MCP_TOKEN"


def parse_http(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port)."""
    host, sep, port_text = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidInput(f"--http takes HOST:PORT, e.g. 127.0.0.1:8765, not {address!r}.")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    @app.command()
    def mcp(
        pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")],
        root: Annotated[
            str | None,
            typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
        ] = None,
        read_only: Annotated[
            bool, typer.Option("--read-only", help="Only the read tools (search, maturity).")
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
    ) -> None:
        """Serve a Pack to agent hosts over MCP: stdio by default, or streamable HTTP.

        Tools: recall, remember, feedback, signal, outcome, resolve, ingest, search,
        maturity (a read-only server has only search and maturity).
        """
        from wolfie.mcp.runtime import serve_http, serve_stdio

        root = root or os.environ.get("WOLFIE_ROOT")
        if http is None:
            serve_stdio(pack, root, read_only=read_only, scope=scope)
            return
        host, port = parse_http(http)
        token = os.environ.get(TOKEN_ENV) or None
        if token is None and not is_loopback(host):
            raise InvalidInput(
                f"Refusing to serve MCP on {host} without a token: set {TOKEN_ENV}, "
                "or bind 127.0.0.1."
            )
        serve_http(pack, root, host, port, token, read_only=read_only, scope=scope)
