"""The OpenAPI schema the TypeScript client's types are generated from is the server's.

``clients/typescript/openapi.json`` is ``python -m wolfie.api.schema``'s output; the
client's ``src/schema.ts`` is generated from it (its own tests check that step). A route
or a record changed without regenerating them fails here.
"""

from __future__ import annotations

from pathlib import Path

from wolfie.api.schema import render

COMMITTED = Path(__file__).resolve().parents[2] / "clients" / "typescript" / "openapi.json"


def test_the_typescript_clients_schema_is_the_servers():
    assert COMMITTED.read_text(encoding="utf-8") == render(), (
        "Stale: run `python -m wolfie.api.schema clients/typescript/openapi.json`, then "
        "`npm run generate` in clients/typescript."
    )
