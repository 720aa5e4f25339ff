"""A correction supersedes at every door (issue 30): the ``wolfie`` CLI as a subprocess
and ``wolfie mcp`` through the official SDK client.

Regression: the second ``remember`` of "What is the staging database host?" with the new
host answered ``merged``, and every later recall's prompt said db-old.internal.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.support.mcp_session import call, stdio_session
from tests.wolfie.test_cli import wolfie

pytestmark = pytest.mark.slow

QUESTION = "What is the staging database host?"
OLD = "The staging database host is db-old.internal"
NEW = "The staging database host moved to db-new.internal"
REWORDED = ("Which host runs the staging database?", "Staging DB now lives on db-new.internal")


def _json(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_cli_supersedes_and_recalls_only_the_new_fact(tmp_root: Path):
    pack = ["--pack", "ops", "--root", str(tmp_root)]
    old = _json(wolfie("remember", QUESTION, OLD, *pack, "--json"))
    assert old["status"] == "created"
    said = wolfie("remember", QUESTION, NEW, *pack, columns=200)
    assert said.returncode == 0, said.stderr
    assert f"supersedes memory {old['id']}" in said.stdout and "db-new.internal" in said.stdout
    again = _json(wolfie("remember", *REWORDED, *pack, "--json"))
    # the correction again in other words ("DB" for "database"): a repeat (issue 42)
    assert again["status"] == "merged" and again["id"] != old["id"]
    recalled = _json(wolfie("recall", QUESTION, *pack, "--json"))
    assert "db-new.internal" in recalled["prompt"] and "db-old.internal" not in recalled["prompt"]
    assert [i["id"] for i in recalled["items"]] == [again["id"]]
    history = _json(wolfie("history", old["id"], *pack, "--json"))
    last = history["versions"][-1]
    assert last["event"] == "superseded" and last["changes"]["superseded_by"]["new"]
    assert "db-new.internal" in last["reason"]
    table = wolfie("history", old["id"], *pack, columns=200)
    assert table.returncode == 0 and "superseded" in table.stdout and "reason:" in table.stdout


def test_mcp_remember_supersedes_and_recall_shows_only_the_new_fact(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            old = await call(session, "remember", intent=QUESTION, response=OLD)
            new = await call(session, "remember", intent=QUESTION, response=NEW)
            assert (new["status"], new["superseded"]) == ("superseded", old["id"])
            assert "db-new.internal" in new["reason"]
            recalled = await call(session, "recall", query=QUESTION)
            assert "db-new.internal" in recalled["prompt"]
            assert "db-old.internal" not in recalled["prompt"]
            history = await call(session, "history", memory_id=old["id"])
            assert history["versions"][-1]["event"] == "superseded"
            assert history["versions"][-1]["changes"]["superseded_by"]["new"] == new["id"]

    anyio.run(main)
