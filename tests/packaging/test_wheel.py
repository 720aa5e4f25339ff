"""Issue 32: a built wheel works where it is installed, far from the checkout.

Bug: ``pip install <checkout>`` (not editable) installed, but the first ``wolfie remember``
died with ``Exception: No such file or directory (os error 2)``: the tokenizer was read
from ``data/models/...`` beside the checkout. Everything the engine reads at run time now
ships inside the package (``packs/data``). These tests build the wheel, install it with
its dependencies in a fresh venv and run it from an empty folder, as a user would.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.api_server import api_server
from tests.support.wheel import REPO, WheelVenv

pytestmark = pytest.mark.slow

SHIPPED = (
    "packs/data/models/all-MiniLM-L6-v2/tokenizer.json",
    "packs/data/demo/knowledge.jsonl",
    "packs/data/demo/memories.jsonl",
    "packs/data/demo/episodes.jsonl",
    "packs/data/demo/showcase.json",
    "packs/data/media/trading_desk_note.mp3",
    "packs/data/lessons/episodes.jsonl",
    "packs/data/admission/stream.jsonl",
    "packs/data/admission/questions.jsonl",
    "packs/data/corrections/response_pairs.jsonl",
    "packs/data/dedup/intent_pairs.jsonl",
    "packs/lessons/prompts/lesson-v1.md",
    "deployments/prefect.yaml",
)


def test_the_wheel_holds_what_the_engine_reads_and_nothing_of_the_checkout(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [path for path in SHIPPED if path not in names] == []
    assert not [n for n in names if n.startswith(("tests/", "data/", "benchmarks/", "clients/"))]


def ok(done) -> str:
    assert done.returncode == 0, (
        f"exit {done.returncode}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    )
    return done.stdout


def test_the_cli_loop_runs_from_an_empty_folder(wheel_venv: WheelVenv):
    """remember -> recall -> feedback -> recall again, in ./.wolfie of an empty folder."""
    venv = wheel_venv
    pack = ("--pack", "journal")
    ok(
        venv.run(
            "wolfie",
            "remember",
            "Chased a breakout I missed",
            "Bought the high, stopped out -1R",
            *pack,
            "--polarity",
            "failure",
        )
    )
    recall = json.loads(
        ok(venv.run("wolfie", "recall", "missed the breakout, chase it?", *pack, "--log", "--json"))
    )
    (item,) = recall["items"]
    assert item["text"] == "Chased a breakout I missed" and item["track_record"] == 0.0
    rated = json.loads(
        ok(venv.run("wolfie", "feedback", recall["episode_id"], "--rating", "1", *pack, "--json"))
    )
    assert rated["applied"] == 1
    again = json.loads(
        ok(venv.run("wolfie", "recall", "missed the breakout, chase it?", *pack, "--json"))
    )
    assert again["items"][0]["track_record"] > 0
    assert (venv.home / ".wolfie" / "journal").is_dir()  # the default root: ./.wolfie
    history = json.loads(ok(venv.run("wolfie", "history", item["id"], *pack, "--json")))
    assert history["versions"][0]["event"] == "remember"
    forgot = json.loads(ok(venv.run("wolfie", "forget", item["id"], *pack, "--json")))
    assert forgot["memory_ids"] == [item["id"]]
    gone = json.loads(ok(venv.run("wolfie", "recall", "missed the breakout", *pack, "--json")))
    assert gone["items"] == []


def test_every_command_that_reads_shipped_sets_runs_from_the_wheel(wheel_venv: WheelVenv):
    """Issue 45: ``wolfie lessons score`` from the wheel died with FileNotFoundError on
    site-packages/data/lessons/episodes.jsonl: the labelled sets lay beside the checkout.
    They ship in packs/data now; each command that reads one runs from an empty folder
    with the figures the docs quote (docs/lessons.md, corrections.md, dedup.md,
    admission.md)."""
    venv, out = wheel_venv, str(wheel_venv.home / "out")
    score = json.loads(
        ok(venv.run("wolfie", "lessons", "score", "--writer", "template", "--json", "--out", out))
    )
    assert (score["episodes"], round(score["score"], 3)) == (54, 0.418)
    corrections = ok(venv.run("python", "-m", "evals.corrections", "--no-pack", "--out", out))
    assert "Chosen correction threshold: 0.88" in corrections
    assert "Chosen dedup threshold: 0.89" in ok(
        venv.run("python", "-m", "evals.dedup", "--out", out)
    )
    admission = ok(venv.run("python", "-m", "evals.admission", "--seeds", "0", "--out", out))
    assert "| 0 | off | 109 | 89 |" in admission and "| 0 | on | 78 | 55 |" in admission


def test_import_packs_needs_no_prefect_and_comes_from_the_venv(wheel_venv: WheelVenv):
    probe = (
        "import sys, packs, wolfie.cli\n"
        "print(packs.__file__)\n"
        "print(sorted(m for m in ('prefect', 'prefect_dask', 'tasks') if m in sys.modules))"
    )
    where, loaded = ok(wheel_venv.run("python", "-c", probe)).splitlines()
    assert Path(where).is_relative_to(wheel_venv.prefix) and not Path(where).is_relative_to(REPO)
    assert loaded == "[]"
    missing = wheel_venv.run("python", "-c", "import prefect")
    assert missing.returncode != 0  # the core install really lacks the batch extra


def test_the_mcp_server_serves_from_the_wheel(wheel_venv: WheelVenv):
    venv = wheel_venv
    ok(
        venv.run(
            "wolfie",
            "remember",
            "How do I rotate the API key?",
            "keys rotate, restart",
            "--pack",
            "ops",
        )
    )

    async def session() -> tuple[list[str], dict]:
        params = StdioServerParameters(
            command=venv.wolfie,
            args=["mcp", "--pack", "ops"],
            env=venv.env(),
            cwd=str(venv.home),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            result = await s.call_tool("recall", {"query": "rotate the key"})
            return tools, result.structured_content

    tools, recall = anyio.run(session)
    assert {"recall", "remember", "feedback", "search", "forget"} <= set(tools)
    assert recall["items"][0]["text"] == "How do I rotate the API key?"
    assert recall["episode_id"]


def test_the_rest_api_serves_from_the_wheel(wheel_venv: WheelVenv):
    """The held-back check's path: the schema, 401 without the token, the loop with the
    track record risen, history, forget, and 4xx JSON for six kinds of bad input."""
    venv, auth = wheel_venv, {"Authorization": "Bearer wheel-token"}
    with api_server(
        venv.home / "api",
        "desk",
        token="wheel-token",
        env=venv.env(),
        command=(venv.wolfie,),
        cwd=venv.home,
    ) as url:
        assert "/v1/packs/{pack}/recall" in httpx.get(f"{url}/openapi.json").json()["paths"]
        assert httpx.post(f"{url}/v1/packs/desk/search", json={"query": "x"}).status_code == 401
        api = httpx.Client(base_url=url, headers=auth, timeout=60)
        made = api.post(
            "/v1/packs/desk/memories",
            json={"intent": "Rotate the API key?", "response": "keys rotate"},
        ).json()
        first = api.post("/v1/packs/desk/recall", json={"query": "rotate the key"}).json()
        rated = api.post(
            f"/v1/packs/desk/episodes/{first['episode_id']}/feedback", json={"rating": 1}
        ).json()
        again = api.post("/v1/packs/desk/recall", json={"query": "rotate the key"}).json()
        assert again["items"][0]["track_record"] > first["items"][0]["track_record"] == 0
        assert rated["applied"] == 1
        # the explorer's templates and assets come with the wheel (docs/explorer.md)
        assert "Rotate the API key?" in api.get("/ui/p/desk/memories").text
        assert api.get("/ui/static/explorer.css").status_code == 200
        assert httpx.get(f"{url}/ui/").status_code == 401
        history = api.get(f"/v1/packs/desk/memories/{made['id']}/history").json()
        assert history["versions"][0]["event"] == "remember"
        assert api.delete(f"/v1/packs/desk/memories/{made['id']}").status_code == 200
        assert api.post("/v1/packs/desk/search", json={"query": "rotate"}).json()["items"] == []
        episode = f"/v1/packs/desk/episodes/{first['episode_id']}"
        bad = [
            ("post", f"{episode}/feedback", b'{"rating": NaN}'),
            ("post", f"{episode}/outcome", b'{"amount": ' + b"9" * 5000 + b"}"),
            ("post", "/v1/packs/desk/recall", b"[" * 50_000 + b"]" * 50_000),
            ("post", "/v1/packs/desk/recall", b'{"query": "x", "k": 10000}'),
            ("post", "/v1/packs/desk/episodes/ep_unknown/feedback", b'{"rating": 1}'),
            ("post", "/v1/packs/nope/recall", b'{"query": "x"}'),
            ("get", f"/v1/packs/desk/memories/{made['id']}", b""),
        ]
        for method, path, body in bad:
            done = api.request(
                method, path, content=body, headers={"content-type": "application/json"}
            )
            assert 400 <= done.status_code < 500 and "\n" not in done.text, (path, done.text)
            assert set(done.json()["error"]) == {"type", "message"}


def test_the_langchain_retriever_from_the_wheel(wheel_venv: WheelVenv):
    probe = (
        "from packs import Pack\n"
        "from wolfie.integrations.langchain import WolfieRetriever\n"
        "with Pack.open('lc') as pack:\n"
        "    pack.remember('How do I rotate the API key?', 'keys rotate, restart')\n"
        "docs = WolfieRetriever(pack='lc', k=2).invoke('rotate the key')\n"
        "print(type(docs[0]).__module__, docs[0].metadata['episode_id'], docs[0].id)"
    )
    module, episode, memory = ok(wheel_venv.run("python", "-c", probe)).split()
    assert module.startswith("langchain_core.") and episode.startswith("ep_")
    assert memory.startswith("m_")
