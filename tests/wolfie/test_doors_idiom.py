"""Issue 43: the REST and MCP doors in their libraries' idiom.

- The REST server loads no MCP module (the parameter table is the doors' own,
  :mod:`wolfie.params`).
- The routes themselves need the token: the bearer guard is a ``Security`` dependency of
  the ``/v1`` and ``/ui`` routers, not only the ASGI check in front of them.
- FastAPI validates what a route answers against the record it declares, and writes the
  validated record byte for byte as ``to_dict()`` and ``json.dumps`` did before.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

from packs import Pack
from tests.support.api_server import REPO, api_env
from wolfie import front_door
from wolfie.api.app import fastapi_app
from wolfie.api.deps import Served
from wolfie.front_door import ScopeGuard
from wolfie.results import TuningHistory

TOKEN = "idiom-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pack]:
    with Pack.open("desk", tmp_path_factory.mktemp("idiom")) as pack:
        pack.remember("Chased a breakout", "Bought the high, stopped out", polarity="failure")
        pack.flush()
        yield pack


@pytest.fixture
def routes_only(desk: Pack) -> Iterator[TestClient]:
    """The FastAPI app with no ASGI guard in front: only its routes' own dependencies."""
    app = fastapi_app(Served({"desk": desk}, ScopeGuard(None)), TOKEN)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_the_rest_server_loads_no_mcp_module():
    code = (
        "import sys, wolfie.api.serve, wolfie.api.schema; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp' "
        "or m.startswith('wolfie.mcp')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=api_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/v1/packs/desk/maturity"),
        ("post", "/v1/packs/desk/search"),
        ("post", "/v1/packs/desk/episodes/e1/feedback"),
        ("get", "/ui/"),
    ],
)
def test_the_routes_refuse_a_request_without_the_token(
    routes_only: TestClient, method: str, path: str
):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        refused = routes_only.request(method, path, headers=headers, json={"query": "x"})
        assert refused.status_code == 401, refused.text
        assert refused.headers["www-authenticate"] == 'Bearer realm="wolfie"'
        assert refused.json() == {
            "error": {
                "type": "Unauthorized",
                "message": "Send Authorization: Bearer <WOLFIE_API_TOKEN>.",
            }
        }
    assert routes_only.get("/healthz").status_code == 200
    assert routes_only.get("/v1/packs/desk/maturity", headers=AUTH).status_code == 200


def test_a_route_answers_its_record_byte_for_byte(routes_only: TestClient, desk: Pack):
    """What ``to_dict()`` and ``json.dumps`` wrote before: datetimes as ``isoformat()``, an
    unexplained item without ``explain``, the floats Python spells."""
    (memory_id,) = [item.id for item in desk.search("breakout", k=1).items]
    expected = {
        f"/v1/packs/desk/memories/{memory_id}": front_door.get(desk, memory_id),
        f"/v1/packs/desk/memories/{memory_id}/history": front_door.history(desk, memory_id),
    }
    for path, record in expected.items():
        answer = routes_only.get(path, headers=AUTH)
        assert answer.content == JSONResponse(record.to_dict()).body, path
    for explain in (False, True):
        body = {"query": "breakout", "k": 1, "explain": explain}
        answer = routes_only.post("/v1/packs/desk/search", headers=AUTH, json=body)
        record = front_door.recall(desk, "breakout", 1, log=False, explain=explain)
        assert answer.content == JSONResponse(record.to_dict()).body
        assert ('"explain":' in answer.text) is explain


def test_a_float_reads_as_python_writes_it(
    routes_only: TestClient, desk: Pack, monkeypatch: pytest.MonkeyPatch
):
    """``1e-05``, not pydantic's ``1e-5``: the answer goes through ``json.dumps``."""
    (memory_id,) = [item.id for item in desk.search("breakout", k=1).items]
    tiny = dataclasses.replace(front_door.get(desk, memory_id), confidence=1e-05)
    monkeypatch.setattr(front_door, "get", lambda pack, memory_id, scope: tiny)
    answer = routes_only.get(f"/v1/packs/desk/memories/{memory_id}", headers=AUTH)
    assert answer.content == JSONResponse(tiny.to_dict()).body
    assert '"confidence":1e-05' in answer.text


def test_a_route_whose_answer_breaks_its_record_is_a_server_fault(
    routes_only: TestClient, monkeypatch: pytest.MonkeyPatch
):
    broken = TuningHistory(runs=({"fitted": "not a tuning report"},))  # a dict, not a report
    monkeypatch.setattr(front_door, "tuning", lambda pack, limit: broken)
    answer = routes_only.get("/v1/packs/desk/tuning", headers=AUTH)
    assert answer.status_code == 500
    assert answer.json()["error"]["type"] == "InternalError"


def test_the_old_names_warn_and_still_work(routes_only: TestClient):
    """One release of ``wolfie.mcp.runtime.BearerToken`` and ``routes.router()``."""
    from starlette.applications import Starlette

    from wolfie.api import routes
    from wolfie.mcp.runtime import BearerToken

    with pytest.warns(DeprecationWarning, match="BearerGuard"):
        app = BearerToken(Starlette(), TOKEN)
    with TestClient(app) as client:
        assert client.get("/").status_code == 401
        assert client.get("/", headers=AUTH).status_code == 404  # past the guard
    with pytest.warns(DeprecationWarning, match="routes.reads"):
        old = routes.router(writable=False)
    app = FastAPI()
    app.include_router(old)
    paths = app.openapi()["paths"]
    assert "/v1/packs/{pack}/search" in paths and "/v1/packs/{pack}/recall" not in paths
