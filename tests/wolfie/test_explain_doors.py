"""An explanation for every ranked item at every door (issue 44): ``wolfie recall/search
--explain`` as a subprocess, ``explain: true`` on MCP through the SDK's client and on
REST against a live ``wolfie api``. At each, the terms re-added give recall's order."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import anyio
import httpx
import pytest

from packs import Pack
from tests.support.api_server import api_server
from tests.support.mcp_session import call, stdio_session
from tests.wolfie.test_cli import wolfie

pytestmark = pytest.mark.slow

TOKEN = "explain-token"
ASKED = "how do I rotate the signing keys"
MEMORIES = [
    ("how do I rotate the signing keys", "run keys rotate --all"),
    ("how to rotate the api token", "wolfie token rotate"),
    ("where are the deploy logs", "in /var/log/deploy"),
    ("how do I restart the worker", "systemctl restart worker"),
]


def _seeded(root: Path, name: str) -> str:
    """A Pack with four memories whose best answer to ASKED was rewarded once: the
    episode's id."""
    with Pack.open(name, root) as pack:
        for intent, response in MEMORIES:
            pack.remember(intent, response)
        episode = pack.recall(ASKED)
        pack.feedback(episode.episode_id or "", 1.0)
        return episode.episode_id or ""


def _check(items: list[dict], episode_id: str | None = None) -> None:
    """Every item explained; the terms sum to its score and the scores fall with rank;
    the rewarded memory names the past question."""
    assert items
    sums = []
    for place, item in enumerate(items, 1):
        x = item["explain"]
        a, b = x["phase_a"], x["phase_b"]
        assert a["similarity"] == pytest.approx(item["similarity"])
        assert a["lexical"] == pytest.approx(item["lexical"])
        assert b["rank"] == place
        total = sum(b["terms"].values())
        assert total == pytest.approx(item["score"], abs=1e-9)
        assert x["utility"]["ranked"] == pytest.approx(item["ranked_utility"])
        sums.append(total)
    assert all(x >= y - 1e-9 for x, y in itertools.pairwise(sums))
    if episode_id is not None:
        evidence = [e for item in items for e in item["explain"]["utility"]["evidence"]]
        assert any(e["episode_id"] == episode_id and e["question"] == ASKED for e in evidence)


def test_the_cli_explains_with_explain_and_not_without(tmp_root: Path):
    episode_id = _seeded(tmp_root, "ops")
    pack = ["--pack", "ops", "--root", str(tmp_root)]
    for command in ("search", "recall"):
        done = wolfie(command, ASKED, *pack, "--explain", "--json")
        assert done.returncode == 0, done.stderr
        _check(json.loads(done.stdout)["items"], episode_id)
    plain = wolfie("search", ASKED, *pack, "--json")
    assert plain.returncode == 0, plain.stderr
    assert all("explain" not in item for item in json.loads(plain.stdout)["items"])
    shown = wolfie("search", ASKED, *pack, "--explain", columns=200)
    assert shown.returncode == 0, shown.stderr
    assert "Phase A: similarity" in shown.stdout and f"from {ASKED!r}" in shown.stdout


def test_mcp_recall_and_search_explain(tmp_root: Path):
    episode_id = _seeded(tmp_root, "agents")

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            for tool in ("search", "recall"):
                found = await call(session, tool, query=ASKED, explain=True)
                _check(found["items"], episode_id)
            plain = await call(session, "search", query=ASKED)
            assert all(not item.get("explain") for item in plain["items"])

    anyio.run(main)


def test_rest_recall_and_search_explain(tmp_root: Path):
    episode_id = _seeded(tmp_root, "desk")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with (
        api_server(tmp_root, "desk", token=TOKEN) as url,
        httpx.Client(base_url=url, headers=auth, timeout=60) as client,
    ):
        for route in ("search", "recall"):
            found = client.post(f"/v1/packs/desk/{route}", json={"query": ASKED, "explain": True})
            assert found.status_code == 200, found.text
            _check(found.json()["items"], episode_id)
        plain = client.post("/v1/packs/desk/search", json={"query": ASKED})
        assert all("explain" not in item for item in plain.json()["items"])
        bad = client.post("/v1/packs/desk/search", json={"query": ASKED, "explain": [1]})
        assert bad.status_code == 422 and "explain" in bad.text
