"""The tuner's doors (issue 41): ``wolfie tune`` as a subprocess, MCP's read-only
``tuning`` tool through the SDK's client, and REST's ``GET /tuning`` on a live server.
Every door lists the same runs, and a bad run id is one line, exit 2."""

from __future__ import annotations

import anyio
import httpx
import pytest

from packs import Pack
from tests.support.api_server import api_server
from tests.support.mcp_session import call, error_of, stdio_session
from tests.wolfie.test_cli_gaps import ok, one_line_error, run

pytestmark = pytest.mark.slow
TOKEN = "tune-doors-token"


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A Pack with a few rewarded episodes, tuned twice through the CLI (too little
    evidence to adopt: each run is recorded with its reason)."""
    root = tmp_path_factory.mktemp("tuned")
    with Pack.open("ops", root) as pack:
        pack.remember("Restart the worker when the queue stalls", "systemctl restart worker")
        pack.remember("Rotate the API keys every quarter", "run the key rotation job")
        recall = pack.recall("the queue is stuck")
        pack.feedback(recall.episode_id or "", 1.0)
    pack_args = ("--pack", "ops", "--root", str(root))
    dry = ok("tune", *pack_args, "--dry-run")
    real = ok("tune", *pack_args)
    return root, pack_args, dry, real


def test_wolfie_tune_records_every_run_and_lists_them(tuned):
    _root, pack_args, dry, real = tuned
    assert dry["dry_run"] and not dry["adopted"] and "too little evidence" in dry["reason"]
    assert not real["dry_run"] and not real["adopted"]
    listed = ok("tune", *pack_args, "--history")
    assert [r["id"] for r in listed] == [real["id"], dry["id"]]
    table = run("tune", *pack_args, "--history")
    assert table.returncode == 0 and real["id"] in table.stdout


@pytest.mark.parametrize(
    ("run_id", "says"),
    [
        ("123", "32 hex digits"),
        ("'; DROP TABLE tuning; --", "32 hex digits"),
        ("0" * 32, "No tuning run"),
    ],
)
def test_a_bad_run_id_is_one_line_exit_2(tuned, run_id, says):
    _root, pack_args, _dry, _real = tuned
    assert says in one_line_error(run("tune", *pack_args, "--rollback", run_id))


def test_rolling_back_a_run_that_adopted_nothing_is_refused(tuned):
    _root, pack_args, _dry, real = tuned
    assert "adopted nothing" in one_line_error(run("tune", *pack_args, "--rollback", real["id"]))
    both = run("tune", *pack_args, "--history", "--rollback", real["id"])
    assert "one of" in one_line_error(both)


def test_mcp_tuning_tool_lists_the_runs_read_only(tuned):
    root, _pack_args, dry, real = tuned

    async def main() -> tuple[dict, str, set[str]]:
        async with stdio_session(root, "--pack", "ops", "--read-only") as session:
            listed = await call(session, "tuning", limit=5)
            bad = await error_of(session, "tuning", limit=0)
            tools = {t.name for t in (await session.list_tools()).tools}
            return listed, bad, tools

    listed, bad, tools = anyio.run(main)
    assert [r["id"] for r in listed["runs"]] == [real["id"], dry["id"]]
    assert "limit" in bad and "tuning" in tools


def test_rest_lists_the_runs(tuned):
    root, _pack_args, dry, real = tuned
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with api_server(root, "ops", token=TOKEN) as url:
        runs = httpx.get(f"{url}/v1/packs/ops/tuning", params={"limit": 1}, headers=auth)
        assert runs.status_code == 200, runs.text
        assert [r["id"] for r in runs.json()["runs"]] == [real["id"]]
        assert (
            httpx.get(f"{url}/v1/packs/ops/tuning", headers=auth).json()["runs"][1]["id"]
            == dry["id"]
        )
        bad = httpx.get(f"{url}/v1/packs/ops/tuning", params={"limit": 0}, headers=auth)
        assert bad.status_code == 422
        assert httpx.get(f"{url}/v1/packs/ops/tuning").status_code == 401
