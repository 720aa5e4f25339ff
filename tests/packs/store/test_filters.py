"""Filters: values are escaped, never spliced."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packs.errors import InvalidFilter
from packs.store.filters import in_clause, sql_literal, tag, where_clause


def test_literals():
    assert sql_literal("it's") == "'it''s'"
    assert sql_literal(3) == "3"
    assert sql_literal(2.5) == "2.5"
    assert sql_literal(True) == "TRUE"
    assert sql_literal(None) == "NULL"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "a\x00b", object(), [1]])
def test_bad_literals_are_refused(bad):
    with pytest.raises(InvalidFilter):
        sql_literal(bad)


def test_where_clause_builds_escaped_conjunction():
    clause = where_clause({"source": "x' OR '1'='1", "kind": ["memory", "knowledge"]}, {"k": "v"})
    assert clause == (
        "(source = 'x'' OR ''1''=''1') AND (kind IN ('knowledge', 'memory')) "
        "AND (array_has_any(tags, make_array('k=v')))"
    )


def test_unknown_column_is_refused():
    with pytest.raises(InvalidFilter, match="Cannot filter on"):
        where_clause({"1=1; DROP TABLE memories; --": "x"})


def test_empty_filters_give_none_and_empty_in_is_false():
    assert where_clause() is None
    assert in_clause("id", []) == "FALSE"


@given(st.text().filter(lambda s: "\x00" not in s))
def test_any_string_literal_round_trips(text):
    """The literal is one quoted string: quotes inside are all doubled."""
    literal = sql_literal(text)
    inner = literal[1:-1]
    assert literal[0] == literal[-1] == "'"
    assert inner.replace("''", "").count("'") == 0
    assert inner.replace("''", "'") == text


def test_tag_format():
    assert tag("symbol", "NVDA") == "symbol=NVDA"
    assert tag("flag", None) == "=flag"  # not "flag=", the tag of an empty string
    assert tag("a=b", "c") == "a\\=b=c" != tag("a", "b=c")


def test_filter_size_is_bounded_before_it_reaches_the_parser():
    """Bug (issue 23): a filter of ~40,000 keys segfaulted the process in LanceDB's SQL
    parser. Past the bounds the filter is refused with an InvalidFilter instead."""
    from packs.store.filters import MAX_FILTER_CHARS, MAX_FILTER_TERMS, MAX_FILTER_VALUES

    with pytest.raises(InvalidFilter, match="40,000 terms"):
        where_clause(metadata={f"k{i}": "v" for i in range(40_000)})
    with pytest.raises(InvalidFilter, match="terms"):
        where_clause(metadata={f"k{i}": "v" for i in range(MAX_FILTER_TERMS + 1)})
    assert where_clause(metadata={f"k{i}": "v" for i in range(MAX_FILTER_TERMS - 1)})
    with pytest.raises(InvalidFilter, match="values"):
        where_clause({"id": [f"m{i}" for i in range(MAX_FILTER_VALUES + 1)]})
    with pytest.raises(InvalidFilter, match="values"):
        where_clause(metadata={"tag": list(range(MAX_FILTER_VALUES + 1))})
    long = "x" * (MAX_FILTER_CHARS // 8)
    with pytest.raises(InvalidFilter, match="characters long"):
        where_clause(metadata={f"k{i}": long for i in range(10)})
