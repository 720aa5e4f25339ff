"""Bad input at the command line, as a user types it: one clear line and exit status 2,
never a traceback (issue 23). Each case runs ``python -m wolfie.cli`` as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from packs import Pack

REPO = Path(__file__).resolve().parents[2]


def wolfie(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    # A str argument holding "\udce9" reaches the process as the byte 0xe9 (POSIX
    # encodes argv with surrogateescape): invalid UTF-8, as a terminal in Latin-1 sends.
    return subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
    )


def one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Created" not in done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bad-input")
    with Pack.open("known", path) as pack:
        pack.remember("Restart the worker after a deploy", "systemctl restart worker")
    return path


@pytest.mark.parametrize(
    ("bad_root", "says"),
    [
        ("/proc", "Can't create Pack"),
        ("a" * 5000, "longer than a path can be"),
        ("ftp://host/packs", "ftp:// is not a storage"),
        ("http://host/packs", "http:// is not a storage"),
        ("memory://x", "memory:// is not a storage"),
    ],
)
def test_a_root_that_cant_hold_a_pack_gets_one_line(bad_root: str, says: str):
    """Bug: these roots exited 1 with an 80-line traceback, and `--root memory://x` said
    "Created memory ..." and kept nothing."""
    done = wolfie("remember", "The deploy failed", "Rolled back", "--pack", "p", "--root", bad_root)
    assert says in one_line_exit_2(done)


def test_invalid_utf8_in_argv_or_metadata_gets_one_line(root: Path):
    """Bug: invalid UTF-8 on the command line (a lone surrogate in Python) or a JSON
    "\\udce9" escape in --metadata exited 1 with a traceback."""
    line = one_line_exit_2(
        wolfie("remember", "caf\udce9 order", "x", "--pack", "known", "--root", str(root))
    )
    assert "not valid UTF-8" in line and "Argument 2" in line  # after "remember"
    line = one_line_exit_2(
        wolfie(
            "remember",
            "an order",
            "x",
            "--pack",
            "known",
            "--root",
            str(root),
            "--metadata",
            '{"city": "caf\\udce9"}',
        )
    )
    assert "lone surrogate" in line
    with Pack.open("known", root, read_only=True) as pack:
        assert pack.count(kind="memory") == 1  # nothing of either was kept


def test_a_missing_pack_says_what_to_run_not_a_python_argument(root: Path):
    """Bug: the CLI told the user to "open it writable with create=True"."""
    line = one_line_exit_2(wolfie("recall", "deploy", "--pack", "nope", "--root", str(root)))
    assert "create=True" not in line
    assert "No Pack 'nope'" in line and "wolfie packs" in line and "wolfie remember" in line


def test_query_with_40000_where_terms_is_refused_not_a_crash(root: Path):
    """Bug: `wolfie query` with ~40,000 --where segfaulted the process (exit -11) in
    LanceDB's SQL parser."""
    wheres = [arg for i in range(40_000) for arg in ("--where", f"intent_text!=v{i}")]
    line = one_line_exit_2(
        wolfie("query", "memories", "--pack", "known", "--root", str(root), *wheres)
    )
    assert "40,000 terms" in line


DEEP = "[" * 1000 + "]" * 1000
HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["remember", "an order", "x", "--metadata", '{"k": ' + DEEP + "}"], "nested too deeply"),
        (["remember", "an order", "x", "--metadata", '{"k": ' + HUGE + "}"], "5,000 digits"),
        (["forget", "--where", '{"source": ' + DEEP + "}"], "nested too deeply"),
        (["forget", "--where", '{"source": ' + HUGE + "}"], "5,000 digits"),
        (["revise", "m_x", "--metadata", '{"k": ' + HUGE + "}"], "5,000 digits"),
    ],
)
def test_json_options_python_cant_take_get_one_line(root: Path, args: list[str], says: str):
    """Bug (issue 31, 9): --metadata or --where holding 1,000-deep nesting (RecursionError)
    or a 5,000-digit integer (ValueError: Python's int-to-text limit) printed a traceback
    and exited 1."""
    line = one_line_exit_2(wolfie(*args, "--pack", "known", "--root", str(root)))
    assert says in line
    with Pack.open("known", root, read_only=True) as pack:
        assert pack.count(kind="memory") == 1
