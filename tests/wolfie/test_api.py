"""Issue 32: ``wolfie api``, a REST API over Packs, driven by a real HTTP client against a
spawned server, as an agent outside Python would drive it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from packs import Pack
from tests.support.api_server import REPO, api_env, api_server
from wolfie.api.app import openapi_schema

pytestmark = pytest.mark.slow

TOKEN = "api-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ROUTES = {
    "/v1/packs/{pack}/memories": {"post"},
    "/v1/packs/{pack}/knowledge": {"post"},
    "/v1/packs/{pack}/recall": {"post"},
    "/v1/packs/{pack}/search": {"post"},
    "/v1/packs/{pack}/episodes/{episode_id}/feedback": {"post"},
    "/v1/packs/{pack}/episodes/{episode_id}/signal": {"post"},
    "/v1/packs/{pack}/episodes/{episode_id}/outcome": {"post"},
    "/v1/packs/{pack}/memories/{memory_id}": {"get", "patch", "delete"},
    "/v1/packs/{pack}/memories/{memory_id}/history": {"get"},
    "/v1/packs/{pack}/forget": {"post"},
    "/v1/packs/{pack}/maturity": {"get"},
    "/v1/packs/{pack}/tuning": {"get"},
    "/healthz": {"get"},
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """One server over Packs "desk" and "ops", with the token."""
    root = tmp_path_factory.mktemp("api")
    with Pack.open("other", root):  # on disk under the root, but not served
        pass
    with (
        api_server(root, "desk", "ops", token=TOKEN) as url,
        httpx.Client(base_url=url, headers=AUTH, timeout=60) as client,
    ):
        client.root = root  # type: ignore[attr-defined]
        yield client


def bare(api: httpx.Client, path: str) -> str:
    """The full URL of ``path``, for a request without the client's token."""
    return str(api.base_url).rstrip("/") + path


def error_of(response: httpx.Response) -> dict[str, str]:
    """The envelope of a 4xx: one line, no traceback."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    assert "\n" not in response.text and "Traceback" not in response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}
    return body["error"]


def test_the_schema_lists_every_route_and_the_docs_page_is_served(api: httpx.Client):
    schema = httpx.get(bare(api, "/openapi.json"), timeout=30).json()
    paths = {path: set(ops) for path, ops in schema["paths"].items()}
    assert paths == ROUTES
    assert schema == openapi_schema()  # what the TypeScript client is generated from
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert "Wolfie" in httpx.get(bare(api, "/docs"), timeout=30).text
    recall = schema["paths"]["/v1/packs/{pack}/recall"]["post"]
    assert recall["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Recall"
    )


def test_without_the_token_every_pack_route_is_401(api: httpx.Client):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        done = httpx.post(
            bare(api, "/v1/packs/desk/search"), json={"query": "x"}, headers=headers, timeout=30
        )
        assert done.status_code == 401 and error_of(done)["type"] == "Unauthorized"
    assert httpx.get(bare(api, "/healthz"), timeout=30).json() == {"status": "ok"}


def test_remember_recall_feedback_history_forget(api: httpx.Client):
    made = api.post(
        "/v1/packs/desk/memories",
        json={
            "intent": "Chased a breakout I missed",
            "response": "Bought the high, stopped out -1R",
            "polarity": "failure",
            "metadata": {"symbol": "NVDA"},
        },
    ).json()
    assert made["status"] == "created"
    query = {"query": "missed the breakout, chase it?", "filters": {"symbol": "NVDA"}}
    first = api.post("/v1/packs/desk/recall", json=query).json()
    (item,) = first["items"]
    assert item["id"] == made["id"] and item["track_record"] == 0.0 and first["episode_id"]
    rated = api.post(
        f"/v1/packs/desk/episodes/{first['episode_id']}/feedback",
        json={"rating": 1, "idempotency_key": "k1"},
    ).json()
    assert rated["applied"] == 1 and rated["track_records"][made["id"]] > 0
    again = api.post("/v1/packs/desk/recall", json=query).json()
    assert again["items"][0]["track_record"] == rated["track_records"][made["id"]]
    stored = api.get(f"/v1/packs/desk/memories/{made['id']}").json()
    assert stored["reward_count"] == 1 and stored["metadata"] == {"symbol": "NVDA"}
    revised = api.patch(
        f"/v1/packs/desk/memories/{made['id']}", json={"outcome": "loss -1R"}
    ).json()
    assert revised["status"] == "revised"
    history = api.get(f"/v1/packs/desk/memories/{made['id']}/history").json()
    assert [v["event"] for v in history["versions"]] == ["remember", "revise"]
    forgot = api.delete(f"/v1/packs/desk/memories/{made['id']}", params={"purge": "true"}).json()
    assert forgot["memory_ids"] == [made["id"]] and forgot["purged"] is True
    assert api.post("/v1/packs/desk/search", json=query).json()["items"] == []
    assert error_of(api.get(f"/v1/packs/desk/memories/{made['id']}"))["type"] == "UnknownMemory"


def test_knowledge_signal_outcome_maturity_and_forget_by_filter(api: httpx.Client):
    chunks = [
        {"text": "Rotate the API keys every month.", "source": "ops.md", "position": 0},
        {"text": "Restart the worker after a deploy.", "source": "ops.md", "position": 1},
    ]
    added = api.post("/v1/packs/ops/knowledge", json={"chunks": chunks}).json()
    assert len(added["ids"]) == 2
    recall = api.post("/v1/packs/ops/recall", json={"query": "rotate the keys", "k": 1}).json()
    assert recall["items"][0]["id"] == added["ids"][0]
    episode = recall["episode_id"]
    signalled = api.post(
        f"/v1/packs/ops/episodes/{episode}/signal", json={"name": "acted_on"}
    ).json()
    assert signalled["source"] == "implicit" and signalled["applied"] == 1
    measured = api.post(f"/v1/packs/ops/episodes/{episode}/outcome", json={"amount": -3}).json()
    assert measured["source"] == "outcome" and measured["value"] < 0
    maturity = api.get("/v1/packs/ops/maturity").json()
    assert maturity["episode_count"] == 1 and maturity["knowledge_count"] == 2
    gone = api.post("/v1/packs/ops/forget", json={"where": {"source": "ops.md"}}).json()
    assert sorted(gone["memory_ids"]) == sorted(added["ids"])


def test_bad_input_gets_a_4xx_json_error_and_leaves_the_pack_unchanged(api: httpx.Client):
    made = api.post(
        "/v1/packs/desk/memories", json={"intent": "Where is the stop?", "response": "Two ATR"}
    ).json()
    episode = api.post("/v1/packs/desk/recall", json={"query": "stop"}).json()["episode_id"]
    before = _counts(api)
    feedback = f"/v1/packs/desk/episodes/{episode}/feedback"
    cases = [
        ("post", feedback, b'{"rating": NaN}', 422, "rating"),
        ("post", feedback, b'{"rating": 1e999}', 422, "rating"),
        (
            "post",
            f"/v1/packs/desk/episodes/{episode}/outcome",
            b'{"amount": ' + b"9" * 5000 + b"}",
            400,
            "integer string conversion",
        ),
        ("post", "/v1/packs/desk/recall", b"[" * 100_000 + b"]" * 100_000, 400, "Recursion"),
        ("post", "/v1/packs/desk/recall", b'{"query": "x", "k": 500}', 422, "k: Input should be"),
        ("post", "/v1/packs/desk/recall", b'{"query": "x", "raiting": 1}', 422, "raiting"),
        (
            "post",
            "/v1/packs/desk/memories",
            b'{"intent": "a", "response": "b", "metadata": {"x": {"y": {"z": 1}}}}',
            422,
            "metadata.x",
        ),
        ("post", "/v1/packs/desk/recall", b'{"query": ', 422, "not valid JSON"),
        ("post", "/v1/packs/desk/recall", b'{"query": "\xff\xfe"}', 400, "UnicodeDecodeError"),
        (
            "post",
            "/v1/packs/desk/recall",
            json.dumps({"query": "x" * 30_000}).encode(),
            400,
            "max_text_chars",
        ),
        (
            "post",
            "/v1/packs/desk/episodes/ep_unknown/feedback",
            b'{"rating": 1}',
            404,
            "ep_unknown",
        ),
        ("post", f"/v1/packs/desk/episodes/{episode}/signal", b'{"name": "bogus"}', 400, "bogus"),
        ("patch", "/v1/packs/desk/memories/m_unknown", b'{"response": "x"}', 404, "m_unknown"),
        ("post", "/v1/packs/nope/recall", b'{"query": "x"}', 404, "serves no Pack 'nope'"),
        ("post", "/v1/packs/desk/forget", b"{}", 400, "exactly one of"),
    ]
    for method, path, body, status, words in cases:
        done = api.request(method, path, content=body, headers={"content-type": "application/json"})
        assert done.status_code == status, (path, body[:60], done.text)
        assert words in error_of(done)["message"], (path, done.text)
    assert _counts(api) == before
    assert api.get(f"/v1/packs/desk/memories/{made['id']}").json()["reward_count"] == 0


def _counts(api: httpx.Client) -> tuple[int, ...]:
    with Pack.open("desk", api.root, read_only=True) as pack:  # type: ignore[attr-defined]
        return tuple(pack.count(t) for t in ("memories", "reward_events", "memory_history"))


def test_a_pack_not_named_by_pack_is_404_whatever_the_path_holds(api: httpx.Client):
    for name in ("other", "..", "%2E%2E", "desk%2F..%2Fother", "DESK"):
        done = api.post(f"/v1/packs/{name}/search", json={"query": "x"})
        assert done.status_code == 404, (name, done.text)
        error_of(done)


def test_a_read_only_server_offers_no_writes(tmp_path: Path):
    with Pack.open("desk", tmp_path) as pack:
        made = pack.remember("Where is the stop?", "Two ATR below the entry")
    with api_server(tmp_path, "desk", args=("--read-only",), token=TOKEN) as url:
        schema = httpx.get(f"{url}/openapi.json", timeout=30).json()
        methods = {op for ops in schema["paths"].values() for op in ops}
        assert methods == {"get", "post"}
        assert set(schema["paths"]) == {
            "/healthz",
            "/v1/packs/{pack}/search",
            "/v1/packs/{pack}/memories/{memory_id}",
            "/v1/packs/{pack}/memories/{memory_id}/history",
            "/v1/packs/{pack}/maturity",
            "/v1/packs/{pack}/tuning",
        }
        client = httpx.Client(base_url=url, headers=AUTH, timeout=60)
        assert client.post("/v1/packs/desk/search", json={"query": "stop"}).json()["items"]
        for method, path in (
            ("post", "/recall"),
            ("post", "/memories"),
            ("delete", f"/memories/{made.id}"),
            ("post", "/forget"),
        ):
            done = client.request(method, f"/v1/packs/desk{path}", json={"query": "x"})
            assert done.status_code in (404, 405), (path, done.text)
            error_of(done)
    with Pack.open("desk", tmp_path, read_only=True) as pack:
        assert pack.count("memories") == 1 and pack.count("episodes") == 0


def test_scope_binds_every_call_as_mcp_scope_does(tmp_path: Path):
    with api_server(tmp_path, "users", args=("--scope", "alice"), token=TOKEN) as url:
        alice = httpx.Client(base_url=url, headers=AUTH, timeout=60)
        made = alice.post(
            "/v1/packs/users/memories", json={"intent": "My locker code?", "response": "1234"}
        ).json()
        assert alice.get(f"/v1/packs/users/memories/{made['id']}").json()["scope"] == "alice"
        refused = alice.post("/v1/packs/users/recall", json={"query": "locker", "scope": "bob"})
        assert (
            refused.status_code == 400 and "pinned to scope 'alice'" in error_of(refused)["message"]
        )
        assert alice.post("/v1/packs/users/forget", json={"scope": "bob"}).status_code == 400
    with api_server(tmp_path, "users", token=TOKEN) as url:
        client = httpx.Client(base_url=url, headers=AUTH, timeout=60)
        bob = client.post("/v1/packs/users/search", json={"query": "locker code", "scope": "bob"})
        assert bob.json()["items"] == []
        mine = client.post(
            "/v1/packs/users/search", json={"query": "locker code", "scope": "alice"}
        ).json()
        assert [i["id"] for i in mine["items"]] == [made["id"]]
        hidden = client.get(f"/v1/packs/users/memories/{made['id']}", params={"scope": "bob"})
        assert hidden.status_code == 404


def test_without_a_token_only_loopback(tmp_path: Path):
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "wolfie.cli",
            "api",
            "--pack",
            "p",
            "--root",
            str(tmp_path),
            "--host",
            "0.0.0.0",
        ],
        cwd=REPO,
        env=api_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "without a token" in refused.stderr
    with api_server(tmp_path, "p") as url:
        assert httpx.post(f"{url}/v1/packs/p/search", json={"query": "x"}, timeout=30).json()
        rebound = httpx.post(
            f"{url}/v1/packs/p/search",
            json={"query": "x"},
            timeout=30,
            headers={"Host": "attacker.example"},
        )
        assert rebound.status_code == 400 and "loopback" in error_of(rebound)["message"]
