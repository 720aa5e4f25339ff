"""Issue 32: the CLI's gaps, closed. Every check runs ``wolfie`` as a subprocess and reads
its exit status and output, as a shell user or an agent's tool runner would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from packs import Pack
from tests.support.wheel import REPO

pytestmark = pytest.mark.slow


def run(*args: str, stdin: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("WOLFIE_ROOT", None)
    return subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
    )


def ok(*args: str, stdin: str | None = None) -> dict:
    done = run(*args, "--json", stdin=stdin)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    text = " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr, done.stderr
    return text


def test_recall_requires_pack_like_every_other_command(tmp_path: Path):
    """Bug: `wolfie recall QUERY` without --pack read a Pack called "demo", where every
    other Pack command requires --pack."""
    done = run("recall", "what is my stop rule?", cwd=tmp_path)
    assert done.returncode == 2 and "Missing option '--pack'" in done.stderr
    assert not (tmp_path / ".wolfie").exists()


def test_scope_on_remember_recall_and_search(tmp_path: Path):
    """Bug: remember, recall and search took no --scope (forget --scope did)."""
    pack = ("--pack", "users", "--root", str(tmp_path))
    alice = ok(
        "remember", "What is my locker code?", "Alice's code is 1234", *pack, "--scope", "alice"
    )
    bob = ok("remember", "What is my locker code?", "Bob's code is 9876", *pack, "--scope", "bob")
    assert alice["id"] != bob["id"] and alice["status"] == bob["status"] == "created"
    seen = ok("recall", "my locker code", *pack, "--scope", "alice", "--log")
    assert [i["id"] for i in seen["items"]] == [alice["id"]] and seen["episode_id"]
    found = ok("search", "my locker code", *pack, "--scope", "bob")
    assert [i["id"] for i in found["items"]] == [bob["id"]] and found["episode_id"] is None
    assert ok("search", "my locker code", *pack)["items"] == []  # scoped rows stay private
    assert ok("get", bob["id"], *pack, "--scope", "bob")["scope"] == "bob"
    error = one_line_error(run("get", bob["id"], *pack, "--scope", "alice"))
    assert "has no memory" in error


def test_text_from_standard_input_and_from_a_file(tmp_path: Path):
    """Bug: no text could come from stdin or a file, and a 5 MB argument fails in the shell
    (the kernel's argument limit). `-` reads stdin, `@FILE` a file, `@@` is a literal @."""
    root = str(tmp_path / "packs")
    with Pack.open("big", root, settings={"max_text_chars": 6_000_000}):
        pass
    pack = ("--pack", "big", "--root", root)
    transcript = tmp_path / "transcript.txt"
    long_text = "The desk reviewed every losing trade of the week. " * 105_000  # 5.4 MB
    transcript.write_text(long_text + "\n", encoding="utf-8")
    made = ok("remember", "@" + str(transcript), "-", *pack, stdin="Cut size after two losses\n")
    stored = ok("get", made["id"], *pack)
    assert stored["text"] == long_text.strip() and stored["response"] == "Cut size after two losses"
    literal = ok("remember", "@@alice asked about stops", "Never move a stop", *pack)
    assert ok("get", literal["id"], *pack)["text"] == "@alice asked about stops"
    query = ok("search", "-", *pack, stdin="who asked about stops?")
    assert query["query"] == "who asked about stops?"
    assert "Only one argument can read standard input" in one_line_error(
        run("remember", "-", "-", *pack, stdin="x")
    )
    missing = one_line_error(run("remember", "@nowhere.txt", "y", *pack))
    assert "no file 'nowhere.txt'" in missing and "@@" in missing
    for command in ("remember", "recall", "search", "revise"):
        assert "- reads standard input, @FILE a UTF-8 file" in " ".join(
            run(command, "--help").stdout.split()
        ), command


def test_search_get_outcome_supersede_maturity_and_maintain(tmp_path: Path):
    """Bug: there was no search, maintain, maturity, outcome, supersede or get command."""
    pack = ("--pack", "desk", "--root", str(tmp_path))
    old = ok("remember", "Where do I set the stop?", "Two ATR below the entry", *pack)
    new = ok("remember", "Where should the stop go now?", "Below the last swing low", *pack)
    recall = ok("recall", "where do I put my stop", *pack, "--log", "--k", "2")
    assert {i["id"] for i in recall["items"]} == {old["id"], new["id"]}
    rewarded = ok("outcome", recall["episode_id"], "--amount", "250", *pack)
    assert rewarded["source"] == "outcome" and rewarded["applied"] == 2 and rewarded["value"] > 0
    stored = ok("get", old["id"], *pack)
    assert stored["track_record"] == pytest.approx(rewarded["track_records"][old["id"]])
    assert stored["reward_count"] == 1 and stored["usage_count"] == 1
    marked = ok("supersede", old["id"], "--by", new["id"], "--reason", "new rule", *pack)
    assert marked == {"memory_id": old["id"], "superseded_by": new["id"], "reason": "new rule"}
    assert [i["id"] for i in ok("search", "where do I put my stop", *pack)["items"]] == [new["id"]]
    assert ok("get", old["id"], *pack)["superseded_by"] == new["id"]
    signals = ok("maturity", *pack)
    assert signals["episode_count"] == 1 and signals["stage"] in ("cold", "warming", "warm")
    report = ok("maintain", *pack)
    assert set(report) >= {"fragments_before", "fragments_after", "expired", "purged"}
    assert sum(report["fragments_after"].values()) <= sum(report["fragments_before"].values())
    error = one_line_error(run("forget", "m_nope", *pack))
    assert "Pass ids that recall, search or remember returned" in error


def test_learn_bench_without_its_corpus_says_where_the_corpora_are(monkeypatch, tmp_path):
    """Bug: from an installed wheel, `wolfie learn-bench` without --corpus read
    data/evals/manpages beside the package, which only the source repository holds.
    (In process: the command's default is patched to a missing folder.)"""
    from typer.testing import CliRunner

    from evals import learning_bench
    from wolfie.cli import app

    monkeypatch.setattr(learning_bench, "DEFAULT_CORPUS", tmp_path / "data" / "evals" / "x")
    done = CliRunner().invoke(app, ["learn-bench", "--out", str(tmp_path / "out")])
    assert done.exit_code == 2, done.output
    assert "pass --corpus FOLDER" in " ".join(done.output.split())
