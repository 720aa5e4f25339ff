"""Read-only query access: filters, aggregation, time travel, read consistency."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing as mp

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from packs import Pack
from packs.errors import InvalidFilter, InvalidInput, ReadOnlyPack
from packs.store.query import aggregate
from wolfie.cli import app
from wolfie.commands.query import parse_where


def test_filters_and_columns(trading_pack):
    trading_pack.flush()
    knowledge = trading_pack.query("knowledge", columns=["id", "kind", "source"])
    assert knowledge.height == 4 and set(knowledge["kind"]) == {"knowledge"}
    assert "intent_embedding" not in trading_pack.query("items").columns  # vectors left out
    failures = trading_pack.query("memories", {"signal_polarity": "failure"})
    assert failures["intent_text"].to_list() == ["Chased an entry after missing the breakout"]
    some = trading_pack.query("items", {"source_position": (">=", 2)})
    assert sorted(some["source_position"].to_list()) == [2, 3]
    listed = trading_pack.query("items", {"source_position": [0, 3]})
    assert listed.height == 2
    nulls = trading_pack.query("items", {"outcome": None})
    assert nulls.height == 5  # four chunks and the memory without an outcome


def test_aggregate(trading_pack):
    trading_pack.flush()
    frame = aggregate(trading_pack.query("items"), ["kind"], ["count", "mean:utility"])
    assert frame.to_dicts() == [
        {"kind": "knowledge", "count": 4, "mean_utility": 0.0},
        {"kind": "memory", "count": 3, "mean_utility": 0.0},
    ]
    with pytest.raises(InvalidInput):
        aggregate(trading_pack.query("items"), ["kind"], ["drop_table:kind"])


def test_time_travel(trading_pack):
    trading_pack.flush()
    before = trading_pack.versions("items")[-1]["version"]
    recall = trading_pack.recall("breakout", k=1)
    trading_pack.feedback(recall.episode_id, 1.0)
    trading_pack.flush()
    now = trading_pack.query("items", {"id": recall.ids[0]})["utility"][0]
    past = trading_pack.query("items", {"id": recall.ids[0]}, version=before)["utility"][0]
    assert (past, now) == (0.0, pytest.approx(0.3))
    with pytest.raises(InvalidInput, match="no version"):
        trading_pack.query("items", version=10_000)


def _write_later(root: str, ready, go) -> None:
    with Pack.open("test", root) as pack:
        ready.set()
        go.wait(60)
        pack.remember("A brand new intent from another process", "its response")


def test_a_reader_sees_new_data_without_reopening(trading_pack, tmp_path):
    trading_pack.close()
    reader = Pack.open("test", tmp_path, read_only=True)
    assert reader.query("memories").height == 3
    ctx = mp.get_context("spawn")  # docs/field-notes.md: never fork a process holding Lance handles
    ready, go = ctx.Event(), ctx.Event()
    writer = ctx.Process(target=_write_later, args=(str(tmp_path), ready, go))
    writer.start()
    ready.wait(120)
    go.set()
    writer.join(120)
    assert writer.exitcode == 0
    assert reader.query("memories").height == 4  # same handle, no reopen
    with pytest.raises(ReadOnlyPack):
        reader.remember("x", "y")


def test_unknown_table_and_columns_are_clear_errors(trading_pack):
    with pytest.raises(InvalidInput, match="Unknown table"):
        trading_pack.query("memories; DROP TABLE memories")
    with pytest.raises(InvalidFilter, match="Unknown column"):
        trading_pack.query("items", {"1=1 OR kind": "x"})
    with pytest.raises(InvalidFilter, match="vector"):
        trading_pack.query("items", {"intent_embedding": "x"})


hostile = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        [
            "' OR '1'='1",
            "x'); DROP TABLE memories; --",
            "\\'",
            "%' --",
            "''",
            "é\u202e\u0000",
            "../../etc/passwd",
            "1e400",
            "NaN",
        ]
    ),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=hostile)
def test_hostile_filter_values_match_only_themselves(trading_pack, value):
    """Any string is an escaped literal: it matches rows whose value equals it, or none,
    and never widens the filter or breaks the table."""
    if "\x00" in value:
        with pytest.raises(InvalidFilter):
            trading_pack.query("items", {"source": value})
        return
    frame = trading_pack.query("items", {"source": value})
    assert frame.height == 0 or set(frame["source"]) == {value}
    assert trading_pack.query("items").height == 7


def test_cli_formats_and_errors(trading_pack, tmp_path):
    trading_pack.close()
    runner = CliRunner()
    base = ["query", "items", "--pack", "test", "--root", str(tmp_path)]
    as_json = runner.invoke(
        app, [*base, "-w", "kind=knowledge", "--columns", "id,kind", "-f", "json"]
    )
    assert as_json.exit_code == 0, as_json.output
    assert {row["kind"] for row in json.loads(as_json.stdout)} == {"knowledge"}
    as_csv = runner.invoke(app, [*base, "--group-by", "kind", "--agg", "count", "-f", "csv"])
    assert as_csv.stdout.splitlines() == ["kind,count", "knowledge,4", "memory,3"]
    table = runner.invoke(app, [*base, "-w", "source=x' OR '1'='1"])
    assert table.exit_code == 0 and "0 row(s)" in table.output


def test_cli_csv_writes_list_columns_as_json(trading_pack, tmp_path):
    """Regression: ``wolfie query items -f csv`` failed with polars' 'CSV format does not
    support nested data' (the tags column is a list), a traceback instead of a table."""
    trading_pack.close()
    result = CliRunner().invoke(
        app, ["query", "items", "--pack", "test", "--root", str(tmp_path), "-f", "csv"]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 7
    assert all(isinstance(json.loads(row["tags"]), list) for row in rows)


def test_parse_where_types_values():
    assert parse_where(["kind=knowledge", "utility>=0.5", "outcome=null", "n!=3"]) == {
        "kind": "knowledge",
        "utility": (">=", 0.5),
        "outcome": None,
        "n": ("!=", 3),
    }
    assert parse_where(["source=a=b"]) == {"source": "a=b"}
    with pytest.raises(InvalidFilter):
        parse_where(["no operator here"])


def test_query_filter_size_is_bounded(trading_pack):
    """Bug (issue 23): `wolfie query` with 40,000 --where conditions segfaulted the
    process in LanceDB's SQL parser; now it is an InvalidFilter."""
    from packs.errors import InvalidFilter
    from packs.store.query import AllOf

    many = AllOf(tuple(("!=", f"v{i}") for i in range(40_000)))
    with pytest.raises(InvalidFilter, match="40,000 terms"):
        trading_pack.query("memories", where={"intent_text": many})
    assert trading_pack.query("memories", where={"kind": "memory"}).height
