"""Issue 43: one reward verb at the doors. ``feedback``, ``signal`` and ``outcome`` are rows
of one table (:mod:`wolfie.reward_verbs`), and the MCP server, the REST API and the CLI
register their reward calls from it, so each door offers exactly the table's verbs, with
the table's arguments, and applies them through ``front_door.reward``. Driven as users
drive them: the MCP SDK's client over stdio, an HTTP client against a live ``wolfie api``,
the CLI as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from packs import Outcome, Pack, Rating, Signal
from packs.errors import InvalidInput
from tests.support.api_server import REPO, api_env, api_server
from tests.support.mcp_session import call, stdio_session
from wolfie.reward_verbs import VERBS, Verb

# A value for every argument a verb of the table takes: a verb with a new argument fails
# here until it has one.
SAMPLES: dict[str, Any] = {"rating": 0.5, "name": "accepted", "amount": 2.0}
TOKEN = "reward-doors-token"
EPISODE_PATHS = "/v1/packs/{pack}/episodes/{episode_id}/"


def arguments(verb: Verb) -> dict[str, Any]:
    return {arg.name: SAMPLES[arg.name] for arg in verb.required}


def test_each_verb_turns_its_arguments_into_its_kind():
    made = {verb.name: verb.reward(arguments(verb)) for verb in VERBS}
    assert made == {
        "feedback": Rating(value=0.5),
        "signal": Signal("accepted", None),
        "outcome": Outcome(2.0),
    }
    feedback = VERBS[0]
    with pytest.raises(InvalidInput, match="unknown 'stars'"):
        feedback.reward({"rating": 1.0, "stars": 5})
    with pytest.raises(InvalidInput, match="no rating"):
        feedback.reward({})


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *args],
        cwd=REPO,
        env=api_env(WOLFIE_ROOT=str(root), COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_each_door_offers_and_applies_exactly_the_tables_reward_verbs(tmp_root: Path):
    """Bug class: a verb written out by hand at each door, so a door could miss one or
    take other arguments. Each door's reward calls are the table's, and each applies."""
    names = {verb.name for verb in VERBS}
    with Pack.open("desk", tmp_root) as pack:
        pack.remember("Restart the worker after a deploy", "systemctl restart worker")
        episodes = {
            door: {v.name: pack.recall("restart the worker").episode_id for v in VERBS}
            for door in ("mcp", "rest", "cli")
        }

    async def mcp() -> None:
        async with stdio_session(tmp_root, "--pack", "desk") as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            keyed = {
                n for n, t in tools.items() if "idempotency_key" in t.input_schema["properties"]
            }
            assert keyed == names | {"resolve"}  # no reward tool outside the table
            for verb in VERBS:
                schema = tools[verb.name].input_schema
                own = [arg.name for arg in verb.args]
                assert list(schema["properties"]) == [
                    "episode_id",
                    *own,
                    "idempotency_key",
                    "scope",
                ]
                assert schema["required"] == ["episode_id", *(a.name for a in verb.required)]
                episode = episodes["mcp"][verb.name]
                done = await call(session, verb.name, episode_id=episode, **arguments(verb))
                assert (done["episode_id"], done["applied"]) == (episode, 1)

    anyio.run(mcp)

    with (
        api_server(tmp_root, "desk", token=TOKEN) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        spec = client.get("/openapi.json").json()
        paths = {p.removeprefix(EPISODE_PATHS) for p in spec["paths"] if EPISODE_PATHS in p}
        assert paths == names
        for verb in VERBS:
            body = spec["components"]["schemas"][f"{verb.name.capitalize()}Body"]
            assert list(body["properties"]) == [*(a.name for a in verb.args), "idempotency_key"]
            episode = episodes["rest"][verb.name]
            path = f"/v1/packs/desk/episodes/{episode}/{verb.name}"
            done = client.post(path, json=arguments(verb)).json()
            assert (done["episode_id"], done["applied"]) == (episode, 1)

    listed = cli(tmp_root, "--help").stdout
    for verb in VERBS:
        assert f" {verb.name} " in listed and verb.short_help in listed
        helped = " ".join(cli(tmp_root, verb.name, "--help").stdout.split())
        assert verb.help in helped
        assert all(flag in helped for arg in verb.args for flag in arg.cli_flags)
        given = [
            part for arg in verb.required for part in (*arg.cli_flags[:1], str(SAMPLES[arg.name]))
        ]
        episode = episodes["cli"][verb.name]
        ran = cli(tmp_root, verb.name, episode, *given, "--pack", "desk", "--json")
        assert ran.returncode == 0, ran.stderr
        done = json.loads(ran.stdout)
        assert (done["episode_id"], done["applied"]) == (episode, 1)
