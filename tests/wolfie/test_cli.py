"""The ``wolfie`` command line as a user runs it: a subprocess, its exit code and output.

One Pack per module (``cli_root``) holds text that looks like Rich markup; every test
reads it through ``python -m wolfie.cli``. Commands that start Prefect (``ingest``) cost
an embedded server start each, so only one test does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from packs import KnowledgeChunk, Pack
from packs.store.query import AllOf
from wolfie.cli import app
from wolfie.commands.query import parse_where

REPO = Path(__file__).resolve().parents[2]
MARKUP_INTENT = "Closed the trade [/red] and [bold]panicked"
MARKUP_CHUNK = "[note | 00:00-00:18] Wait for the retest before entering"


def wolfie(
    *args: str, columns: int = 100, timeout: float = 240, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COLUMNS": str(columns),
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PREFECT_LOGGING_LEVEL": "CRITICAL",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def cli_root(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("cli")
    with Pack.open("cli", root) as pack:
        pack.add_knowledge(
            [
                KnowledgeChunk(MARKUP_CHUNK, "note.mp3", 0, title="[note | 00:00-00:18]"),
                KnowledgeChunk("Risk one percent of the account per trade.", "book.md", 0),
                KnowledgeChunk("Stop trading for the day after losing 3R.", "book.md", 1),
                KnowledgeChunk("Never hold a full position through earnings.", "book.md", 2),
            ]
        )
        pack.remember(MARKUP_INTENT, "Sold at the low [/red] out of fear.", polarity="failure")
        pack.remember("Waited for the retest", "Entered on the retest, +2R.", polarity="success")
    return str(root)


def test_recall_prints_markup_like_text_literally(cli_root):
    """Bug: Rich read stored text as markup: `[note | 00:00-00:18]` vanished from the
    output and a memory holding `[/red]` crashed `wolfie recall` with a MarkupError."""
    done = wolfie(
        "recall",
        "closed the trade and panicked, retest?",
        "--pack",
        "cli",
        "--root",
        cli_root,
        "--k",
        "3",
        columns=200,
    )
    assert done.returncode == 0, done.stderr
    assert "[/red]" in done.stdout and "[bold]panicked" in done.stdout
    assert "[note | 00:00-00:18]" in done.stdout


def test_query_prints_markup_like_text_literally(cli_root):
    """Bug: `wolfie query` crashed with a MarkupError on a stored `[/red]`."""
    done = wolfie(
        "query",
        "items",
        "--pack",
        "cli",
        "--root",
        cli_root,
        "--columns",
        "title,intent_text",
        columns=200,
    )
    assert done.returncode == 0, done.stderr
    assert MARKUP_INTENT in done.stdout and "[note | 00:00-00:18]" in done.stdout


def test_error_line_prints_user_text_literally(cli_root):
    """Bug: main() printed WolfieError text with markup=True, so a user string holding
    `[/red]` in the message crashed the error line itself."""
    done = wolfie("query", "items", "--pack", "cli", "--root", cli_root, "--where", "[/red]x=1")
    assert done.returncode == 2
    assert "[/red]x=1" in done.stderr and "Traceback" not in done.stderr


def test_repeated_where_on_one_column_ands(cli_root):
    """Bug: `--where 'utility>0' --where 'utility<0.5'` kept only the last condition."""
    assert parse_where(["source_position>=0", "source_position<1"]) == {
        "source_position": AllOf(((">=", 0), ("<", 1)))
    }
    assert parse_where(["kind=knowledge"]) == {"kind": "knowledge"}
    done = wolfie(
        "query",
        "items",
        "--pack",
        "cli",
        "--root",
        cli_root,
        "-f",
        "json",
        "--where",
        "source_position>=1",
        "--where",
        "source_position<2",
        "--where",
        "kind=knowledge",
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["source"], r["source_position"]) for r in rows] == [("book.md", 1)]


def test_default_query_table_is_readable_in_100_columns(cli_root):
    """Bug: `wolfie query memories` printed all 24 columns in 100 terminal columns, so
    the headers came out as vertical letters."""
    done = wolfie("query", "memories", "--pack", "cli", "--root", cli_root, columns=100)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    header = next(line for line in lines if "intent_text" in line)
    for name in ("id", "intent_text", "utility", "confidence", "reward_count"):
        assert f" {name} " in header
    assert "more column(s)" in done.stdout


def test_help_is_not_cut_at_80_columns():
    """Bug: at 80 columns Rich's help panels cut option names and long words with "…",
    and the command list cut descriptions with "..."."""
    done = wolfie("--help", columns=80)
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("Commands:")[1]
    assert "…" not in done.stdout and "..." not in commands, done.stdout
    names = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert {"remember", "feedback", "signal", "packs"} <= set(names)
    runner = CliRunner()
    for name in names:
        result = runner.invoke(app, [name, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        assert result.exit_code == 0, result.output
        assert "…" not in result.output, f"wolfie {name} --help is cut:\n{result.output}"
        assert max(len(line) for line in result.output.splitlines()) <= 80


def test_ingest_exits_2_when_a_source_failed(tmp_path):
    """Bugs: `wolfie ingest` exited 0 when a source failed, though bad input exits 2; and
    its summary printed source names as Rich markup (a folder `[bold]docs` lost its name)."""
    docs = tmp_path / "[bold]docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Stops\n\nNever move a stop away from the price.\n")
    done = wolfie(
        "ingest",
        str(docs),
        str(tmp_path / "missing.md"),
        "--pack",
        "docs",
        "--root",
        str(tmp_path / "packs"),
        columns=300,
    )
    output = " ".join(done.stdout.split())
    assert "[bold]docs/guide.md" in output and "missing.md" in output, done.stderr
    assert done.returncode == 2, done.stdout + done.stderr
    with Pack.open("docs", tmp_path / "packs", read_only=True) as pack:
        assert pack.count(kind="knowledge") >= 1  # the good source was ingested
