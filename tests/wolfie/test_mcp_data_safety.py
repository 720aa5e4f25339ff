"""Issue 23's engine cases through ``wolfie mcp --http``, as agents reach it.

- **A JSON ``"\\udce9"``.** The SDK's own client can't send a lone surrogate (pydantic
  refuses to encode it), and the handshake-era transport refuses it at parsing; the
  modern protocol path parses with ``json.loads`` and hands it to the tool. Bug: a lone
  surrogate in ``resolve``'s response or a reward's idempotency key was buffered, and
  every later flush failed on it, so nothing rewarded afterwards was stored. Now the
  call fails alone and the Pack goes on (``maturity`` flushes).
- **A shared idempotency key.** Bug: Alice's ``webhook-1`` made Bob's reward with the
  key ``webhook-1``, on another episode, come back ``duplicate: true, applied: 0``. Driven
  with the official SDK's client.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from packs import Pack
from tests.support.mcp_session import REPO, call, http_session, mcp_command, mcp_env

pytestmark = pytest.mark.slow

TOKEN = "data-safety-token"
MODERN = "2026-07-28"  # the SDK's modern protocol version: parsed with json.loads


@pytest.fixture
def server(tmp_root: Path) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = subprocess.Popen(
        mcp_command("--pack", "agents", "--http", f"127.0.0.1:{port}"),
        cwd=REPO,
        env=mcp_env(tmp_root, WOLFIE_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            pytest.fail(f"wolfie mcp --http exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("wolfie mcp --http did not start listening in 120 s")
            time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def raw_call(url: str, tool: str, arguments_json: str) -> dict[str, Any]:
    """One tools/call on the modern protocol, its JSON written by hand (a ``\\udce9``
    escape survives as it is)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = (
        f'{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"_meta": '
        f'{json.dumps(meta)}, "name": "{tool}", "arguments": {arguments_json}}}}}'
    )
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    answer = httpx.post(url, content=body.encode(), headers=headers, timeout=120)
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["result"])


def test_lone_surrogates_fail_alone_and_keys_belong_to_their_episode(server: str, tmp_root):
    async def main() -> dict[str, Any]:
        async with http_session(server, TOKEN) as session:
            await call(
                session,
                "remember",
                intent="The deploy failed with a locked database",
                response="Stop the scheduler before migrating, then rerun the deploy.",
            )
            query = "deploy fails because the database is locked"
            alice = await call(session, "recall", query=query, scope="alice")
            bob = await call(session, "recall", query=query, scope="bob")
            for bad in (
                raw_call(
                    server,
                    "resolve",
                    json.dumps({"episode_id": alice["episode_id"]})[:-1]
                    + ', "response": "caf\\udce9"}',
                ),
                raw_call(
                    server,
                    "feedback",
                    json.dumps({"episode_id": alice["episode_id"]})[:-1]
                    + ', "rating": 1.0, "idempotency_key": "k\\udce9"}',
                ),
            ):
                text = " ".join(part.get("text", "") for part in bad["content"])
                # refused by the tool's input schema (pydantic: not valid Unicode, told on
                # one line since issue 32) or, past it, by the engine's check: either way
                # the call fails alone
                refused = ("lone surrogate" in text) or ("as a unicode string" in text)
                assert bad["isError"] and refused, bad
            first = await call(
                session,
                "feedback",
                episode_id=alice["episode_id"],
                rating=1.0,
                idempotency_key="webhook-1",
            )
            second = await call(
                session,
                "feedback",
                episode_id=bob["episode_id"],
                rating=-1.0,
                idempotency_key="webhook-1",
            )
            again = await call(
                session,
                "feedback",
                episode_id=bob["episode_id"],
                rating=-1.0,
                idempotency_key="webhook-1",
            )
            await call(session, "maturity")  # flushes: nothing left to fail on
            return {"first": first, "second": second, "again": again}

    answers = anyio.run(main)
    assert answers["first"]["applied"] == 1 and not answers["first"]["duplicate"]
    assert answers["second"]["applied"] == 1 and not answers["second"]["duplicate"]
    assert answers["again"]["duplicate"] and answers["again"]["applied"] == 0
    with Pack.open("agents", tmp_root, read_only=True) as pack:
        keyed = pack.query("rewards", where={"idempotency_key": "webhook-1"})
        assert keyed.height == 2 and keyed["episode_id"].n_unique() == 2
        assert pack.count("episodes") == 2
