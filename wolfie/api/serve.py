"""Running the REST API: open the named Packs, serve them with uvicorn, close them.

Once the server listens it prints its URL to stderr (port 0 picks a free one) with the
server ``wolfie mcp --http`` runs too (:class:`wolfie.announcing.Announcing`), so a script
or a test starting it knows where to go.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

import uvicorn

from packs.pack import Pack
from wolfie.announcing import Announcing
from wolfie.api.app import TOKEN_ENV, build_app
from wolfie.api.deps import Served
from wolfie.front_door import ScopeGuard

log = logging.getLogger("wolfie.api")


def open_packs(names: Sequence[str], root: str | None, read_only: bool) -> dict[str, Pack]:
    """Each named Pack, open (created if missing, unless ``read_only``); all or none."""
    opened: dict[str, Pack] = {}
    try:
        for name in dict.fromkeys(names):
            opened[name] = Pack.open(name, root, read_only=read_only)
    except BaseException:
        for handle in opened.values():
            handle.close()
        raise
    return opened


def serve(
    names: Sequence[str],
    root: str | None,
    host: str,
    port: int,
    token: str | None,
    *,
    read_only: bool,
    scope: str | None,
) -> None:
    """Serve the Packs at ``http://host:port`` until interrupted, then close them."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if token is None:
        log.warning("No %s set: serving loopback only, to any local process.", TOKEN_ENV)
    packs = open_packs(names, root, read_only)
    try:
        app = build_app(Served(packs, ScopeGuard(scope)), token)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        names = ", ".join(repr(name) for name in sorted(packs))
        Announcing(
            config, lambda url: f"Wolfie API serving Packs {names} at {url} (docs: /docs)"
        ).run()
    finally:
        for handle in packs.values():
            handle.close()
