"""Issue 32: what ``wolfie mcp`` says of itself is true, and it says nothing else.

Driven as an agent host drives it: the MCP SDK's own client over stdio, and the
``wolfie`` command as a subprocess.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.mcp_session import REPO, call, error_of, mcp_env, stdio_session

pytestmark = pytest.mark.slow


def help_text() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "wolfie.cli", "mcp", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**mcp_env(REPO), "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def tool_names(root: Path, *args: str) -> set[str]:
    async with stdio_session(root, "--pack", "agents", *args) as session:
        return {tool.name for tool in (await session.list_tools()).tools}


def test_mcp_help_lists_every_tool_the_server_has(tmp_root: Path):
    """Bug: `wolfie mcp --help` listed 10 tools where the server had 13, and said a
    read-only server had only search and maturity (it also has history)."""
    text = help_text()
    listed = set(re.findall(r"^\s+(\w+): ", text, flags=re.MULTILINE))
    (reads,) = re.findall(r"A --read-only server has only ([\w, ]+)\.", text)
    served = anyio.run(tool_names, tmp_root)
    assert listed == served and len(served) == 16  # 13, issue 30's held and distill, tuning
    assert set(reads.split(", ")) == anyio.run(tool_names, tmp_root, "--read-only")
    assert f"Tools ({len(served)})" in text


def test_forget_parameters_describe_forgetting(tmp_root: Path):
    """Bug: `forget.memory_ids` carried `signal`'s description ("Only these recalled item
    ids get the signal")."""

    async def main() -> dict:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        return {name: tool.input_schema["properties"] for name, tool in tools.items()}

    props = anyio.run(main)
    forget_ids = props["forget"]["memory_ids"]["description"]
    assert "forget" in forget_ids and "signal" not in forget_ids
    assert "signal" in props["signal"]["memory_ids"]["description"]
    assert "Forget every row" in props["forget"]["scope"]["description"]


def test_a_schema_violation_is_one_line_naming_the_parameter_and_its_limit(tmp_root: Path):
    """Bug: a call breaking the input schema came back as pydantic's multi-line dump
    ending in a documentation URL, not the one-line error the README promises."""

    async def main() -> list[str]:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await call(session, "remember", intent="Restart the worker", response="systemctl")
            return [
                await error_of(session, "recall", query="restart", k=500),
                await error_of(session, "feedback", episode_id="ep_x", rating=7),
                await error_of(session, "remember", response="no intent given"),
            ]

    k, rating, missing = anyio.run(main)
    for text in (k, rating, missing):
        assert "\n" not in text and "http" not in text and "pydantic" not in text, text
    assert k == (
        "Error executing tool recall: InvalidInput: k: Input should be less than or equal "
        "to 100 (got 500)"
    )
    assert "rating: Input should be less than or equal to 1" in rating and "(got 7)" in rating
    assert "intent: Field required" in missing


def test_no_library_debug_output_reaches_stderr(tmp_root: Path, tmp_path: Path):
    """Bug: bm25s sets its logger to DEBUG at import, so each lexical index build printed
    "DEBUG:bm25s:Building index from IDs" on the server's stderr, into MCP clients."""
    log = tmp_path / "stderr.txt"

    async def main() -> None:
        with log.open("w") as errlog:
            async with stdio_session(tmp_root, "--pack", "agents", errlog=errlog) as session:
                for n in range(6):  # enough rows that a later recall rebuilds the index
                    await call(
                        session,
                        "remember",
                        intent=f"How to restart worker {n}",
                        response=f"systemctl restart w{n}",
                    )
                await call(session, "recall", query="restart the worker")
                await call(session, "remember", intent="Rotate the keys", response="keys rotate")
                assert (await call(session, "recall", query="rotate keys"))["items"]

    anyio.run(main)
    assert "DEBUG" not in log.read_text(), log.read_text()[-2000:]
