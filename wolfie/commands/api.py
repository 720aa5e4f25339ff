"""``wolfie api``: serve Packs over a REST API (FastAPI on uvicorn), for agents and
services outside Python and MCP. Every ``/v1/`` request needs ``Authorization: Bearer
$WOLFIE_API_TOKEN``; without a token the server runs on loopback only, with a warning,
and refuses any other address (docs/api.md)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from packs.errors import InvalidInput
from wolfie.commands.mcp import is_loopback
from wolfie.commands.options import RootArg

TOKEN_ENV = "WOLFIE_API_TOKEN"  # wolfie.api.app reads the same name


def register(app: typer.Typer) -> None:
    @app.command(short_help="Serve Packs over a REST API (OpenAPI at /docs).")
    def api(
        pack: Annotated[
            list[str], typer.Option("--pack", "-p", help="A Pack to serve (repeatable).")
        ],
        root: RootArg = None,
        host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8080,
        scope: Annotated[
            str | None, typer.Option(help="Pin every call to this user or session scope.")
        ] = None,
        read_only: Annotated[
            bool,
            typer.Option("--read-only", help="Open the Packs read-only: no write routes."),
        ] = False,
    ) -> None:
        """Serve the Packs named by --pack at http://HOST:PORT/v1/packs/{pack}/...: remember,
        knowledge, recall, search, feedback, signal, outcome, get, revise, history, forget,
        maturity; /healthz, /docs and /openapi.json. Requests need 'Authorization: Bearer
        $WOLFIE_API_TOKEN'; without the variable only loopback is served. A Pack not named
        here is a 404."""
        from wolfie.api.serve import serve

        token = os.environ.get(TOKEN_ENV) or None
        if token is None and not is_loopback(host):
            raise InvalidInput(
                f"Refusing to serve the API on {host} without a token: set {TOKEN_ENV}, "
                "or bind 127.0.0.1."
            )
        root = root or os.environ.get("WOLFIE_ROOT")
        serve(pack, root, host, port, token, read_only=read_only, scope=scope)
