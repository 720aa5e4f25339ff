"""Hostile strings through the public API and the CLI: quotes, SQL fragments, NUL bytes,
very long and unusual Unicode, path traversal, NaN and inf. Each gets a clear error or a
correct result; nothing is injected, written outside the root, crashed or corrupted."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from packs import Pack, WolfieError
from packs.store import schemas as S
from tests.support.packs import table_versions
from wolfie.cli import app

NASTY = [
    "' OR '1'='1",
    "x'); DROP TABLE memories; --",
    "\\' OR 1=1 --",
    "%' --",
    "''",
    '"',
    "../../etc/passwd",
    "..",
    "/",
    "a/b",
    "C:\\Windows",
    "\x00",
    "abc\x00def",
    "\u202e\u200f",
    "𝕳𝖊𝖑𝖑𝖔 👋🏽 ﷽",
    "Ω" * 5000,
    " " * 100,
    "\n\t\r",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "None",
    "kind = 'memory'",
    "id IN (SELECT id FROM memories)",
    "$(rm -rf /)",
    "`id`",
    "%s%s%s",
]
hostile_text = st.one_of(st.sampled_from(NASTY), st.text(max_size=300))
hostile_number = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e-308, 2.0, -1.5]),
    st.floats(allow_nan=True, allow_infinity=True),
)
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def outside(tmp_path: Path, root: Path) -> set[Path]:
    """Everything under ``tmp_path`` that is not under ``root``."""
    return {p for p in tmp_path.rglob("*") if not p.is_relative_to(root)}


@SETTINGS
@given(intent=hostile_text, response=hostile_text, meta=hostile_text)
def test_remember_stores_exactly_or_refuses(trading_pack, intent, response, meta):
    try:
        result = trading_pack.remember(intent, response, metadata={"note": meta})
    except WolfieError:
        return
    row = trading_pack.get(result.id)
    texts = [row["intent_text"]] + [p["intent_text"] for p in row["provenance"]]
    assert intent.strip() in texts  # stored verbatim (stripped), never mangled


@SETTINGS
@given(query=hostile_text, value=hostile_text)
def test_recall_and_filters_never_inject(trading_pack, query, value):
    trading_pack.flush()
    rows = trading_pack.count()
    try:
        result = trading_pack.search(query, where={"source": value}, metadata={"symbol": value})
    except WolfieError:
        return
    assert all(item.source == value for item in result.items)
    assert trading_pack.count() == rows


@SETTINGS
@given(rating=hostile_number, key=hostile_text)
def test_feedback_with_hostile_numbers_and_keys(trading_pack, rating, key):
    recall = trading_pack.recall("breakout", k=1)
    trading_pack.flush()
    before = table_versions(trading_pack)
    try:
        result = trading_pack.feedback(recall.episode_id, rating, idempotency_key=key)
    except WolfieError:
        trading_pack.flush()
        assert table_versions(trading_pack) == before  # refused: nothing written
        return
    assert -1.0 <= rating <= 1.0 and math.isfinite(rating)
    assert all(-1.0 <= u <= 1.0 for u in result.track_records.values())


@SETTINGS
@given(episode=hostile_text)
def test_unknown_or_hostile_episode_ids(trading_pack, episode):
    with pytest.raises(WolfieError):
        trading_pack.feedback(episode, 1.0)


@SETTINGS
@given(name=hostile_text)
def test_pack_names_never_escape_the_root(tmp_path, name):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    before = outside(tmp_path, root)
    try:
        with Pack.open(name, root) as pack:
            pack.remember("intent", "response")
    except WolfieError:
        pass
    assert outside(tmp_path, root) == before  # nothing written outside the root
    for path in root.rglob("*"):
        assert path.resolve().is_relative_to(root.resolve())


@SETTINGS
@given(value=hostile_text, column=st.sampled_from(["source", "kind", "title", "id"]))
def test_cli_query_with_hostile_filters(trading_pack, tmp_path, value, column):
    trading_pack.flush()
    if "\x00" in value:
        return  # a shell can't pass a NUL byte in an argument
    result = CliRunner().invoke(
        app,
        [
            "query",
            "items",
            "--pack",
            "test",
            "--root",
            str(tmp_path),
            "-w",
            f"{column}={value}",
            "-f",
            "json",
        ],
    )
    # the console entry point prints a WolfieError as one line and exits 2
    assert result.exit_code == 0 or isinstance(result.exception, WolfieError), result.output
    assert trading_pack.count(S.MEMORIES) == 7


@SETTINGS
@given(name=hostile_text)
def test_cli_refuses_hostile_pack_names_cleanly(tmp_path, name):
    """A read-only CLI command never creates anything, whatever the Pack name."""
    if "\x00" in name or name.startswith("-"):
        return  # not passable as a shell argument / read as an option
    root = tmp_path / "cli-root"
    root.mkdir(exist_ok=True)
    result = CliRunner().invoke(app, ["recall", "query", "--pack", name, "--root", str(root)])
    assert result.exit_code != 0  # no such Pack, or an invalid name
    assert isinstance(result.exception, WolfieError | SystemExit)
    assert list(root.iterdir()) == []
