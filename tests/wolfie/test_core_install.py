"""A core install (no extras): the engine, the CLI and the MCP server work; a command
that needs an extra names it and exits 2; ``wolfie --help`` loads none of the heavy
libraries (issue 21). The held-back check installs a real venv without extras; here the
extras' modules are made unimportable in a subprocess (tests/support/no_extras.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
CORE = "import tests.support.no_extras; from wolfie.cli import main; main()"
HEAVY = ("lancedb", "prefect", "ragas", "faster_whisper", "matplotlib", "onnxruntime", "mcp")


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}


def core(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CORE, *args],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_help_and_usage_errors_load_no_heavy_library():
    probe = (
        "import sys; sys.argv = ['wolfie', *sys.argv[1:]]\n"
        "from wolfie.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    for args in (["--help"], ["recall"], ["ingest", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args],
            cwd=REPO,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.stdout.splitlines()[-1] in ("0 []", "2 []"), (args, done.stdout[-300:])


def test_remember_recall_and_feedback_work_without_extras(tmp_path):
    root = str(tmp_path)
    made = core(
        "remember",
        "How do I rotate the API key?",
        "Run keys rotate, then restart",
        "--pack",
        "core",
        "--root",
        root,
    )
    assert made.returncode == 0, made.stderr
    found = core(
        "recall", "rotate the API key", "--pack", "core", "--root", root, "--log", "--json"
    )
    assert found.returncode == 0, found.stderr
    recall = json.loads(found.stdout)
    assert recall["items"][0]["text"] == "How do I rotate the API key?"
    rated = core(
        "feedback", recall["episode_id"], "--rating", "1", "--pack", "core", "--root", root
    )
    assert rated.returncode == 0, rated.stderr
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tests.support.no_extras, sys\nfrom packs import Pack\n"
            "print('prefect' in sys.modules)",
        ],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.stdout.strip() == "False", probe.stderr


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["demo", "--root", "{root}"], "batch"),
        (["ingest", "{doc}", "--pack", "p", "--root", "{root}"], "batch"),
    ],
    ids=["demo", "ingest"],
)
def test_a_command_that_needs_an_extra_names_it_and_exits_2(tmp_path, args, extra):
    doc = tmp_path / "guide.md"
    doc.write_text("# Stops\n\nNever move a stop.\n")
    done = core(*(a.format(root=tmp_path / "packs", doc=doc) for a in args))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install 'wolfie[{extra}]'" in " ".join(done.stderr.split())


def test_the_mcp_server_lists_its_tools_without_extras(tmp_path):
    assert core("remember", "a", "b", "--pack", "core", "--root", str(tmp_path)).returncode == 0

    async def tools() -> list[str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-c", CORE, "mcp", "--pack", "core", "--root", str(tmp_path)],
            env=_env(),
            cwd=str(REPO),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return sorted(tool.name for tool in (await s.list_tools()).tools)

    assert {"recall", "remember", "feedback", "search"} <= set(anyio.run(tools))


@pytest.mark.parametrize(
    ("module", "extra"),
    [("langchain", "langchain"), ("llama_index", "llama-index")],
)
def test_an_integration_without_its_extra_names_it(module, extra):
    """Issue 45: ``from wolfie.integrations.langchain import WolfieRetriever`` without
    langchain-core raised a bare ModuleNotFoundError; it now raises a WolfieError that
    names the extra, as the CLI does."""
    probe = (
        "import tests.support.no_extras\n"
        "from packs.errors import MissingExtra\n"
        "try:\n"
        f"    from wolfie.integrations.{module} import WolfieRetriever\n"
        "except MissingExtra as error:\n"
        "    print('MissingExtra', error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("MissingExtra"), done.stdout
    assert f"pip install 'wolfie[{extra}]'" in done.stdout
