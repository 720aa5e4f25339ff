"""Every bad input gets a clear error from the WolfieError family and leaves the Pack as
it was (same table versions and row counts)."""

from __future__ import annotations

import pytest

from packs import Pack, WolfieError
from packs.errors import (
    EmbeddingMismatch,
    InvalidFilter,
    InvalidInput,
    InvalidPackName,
    InvalidReward,
    ReadOnlyPack,
    TextTooLong,
    UnknownEpisode,
)
from tests.support.packs import HashEmbedder, table_versions
from tests.support.storage import storage_of


@pytest.fixture
def unchanged(trading_pack):
    """Yields the Pack; afterwards asserts no table moved."""
    trading_pack.flush()
    before = table_versions(trading_pack)
    yield trading_pack
    trading_pack.flush()
    assert table_versions(trading_pack) == before


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_intent_and_query(unchanged, text):
    with pytest.raises(InvalidInput, match="empty"):
        unchanged.remember(text, "response")
    with pytest.raises(InvalidInput, match="empty"):
        unchanged.recall(text)


@pytest.mark.parametrize("value", [None, 42, b"bytes", ["list"]])
def test_wrong_type_text(unchanged, value):
    with pytest.raises(InvalidInput, match="must be a str"):
        unchanged.remember(value, "response")
    with pytest.raises(InvalidInput, match="must be a str"):
        unchanged.recall(value)


def test_oversized_text_is_refused_not_truncated(unchanged):
    huge = "word " * (unchanged.settings.max_text_chars // 5 + 10)
    with pytest.raises(TextTooLong, match="max_text_chars"):
        unchanged.remember(huge, "response")
    with pytest.raises(TextTooLong):
        unchanged.recall(huge)


def test_nul_byte_is_refused(unchanged):
    with pytest.raises(InvalidInput, match="NUL"):
        unchanged.remember("intent\x00", "response")


def test_unknown_episode(unchanged):
    with pytest.raises(UnknownEpisode, match="no episode"):
        unchanged.feedback("ep_does_not_exist", 1.0)
    with pytest.raises(UnknownEpisode):
        unchanged.feedback("x' OR '1'='1", 1.0)


@pytest.mark.parametrize(
    "rating", [float("nan"), float("inf"), -float("inf"), 1.01, -2, "1", None, True]
)
def test_bad_rating(trading_pack, rating):
    recall = trading_pack.recall("breakout")
    trading_pack.flush()
    before = table_versions(trading_pack)
    with pytest.raises(InvalidReward):
        trading_pack.feedback(recall.episode_id, rating)
    trading_pack.flush()
    assert table_versions(trading_pack) == before


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".", "..", "x" * 65, "/abs", "a\\b", None])
def test_bad_pack_names(tmp_path, name):
    with pytest.raises(InvalidPackName):
        Pack.open(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_write_through_read_only_handle(trading_pack, tmp_path):
    trading_pack.flush()
    before = table_versions(trading_pack)
    reader = Pack.open("test", tmp_path, read_only=True)
    for call in (
        lambda: reader.remember("a", "b"),
        lambda: reader.recall("breakout"),
        lambda: reader.feedback("ep_x", 1.0),
        lambda: storage_of(reader).drop_all(),
    ):
        with pytest.raises(ReadOnlyPack):
            call()
    assert table_versions(trading_pack) == before


def test_embedding_dimension_mismatch(trading_pack, tmp_path):
    trading_pack.flush()
    with pytest.raises(EmbeddingMismatch, match="dim 384"):
        Pack.open("test", tmp_path, embedder=HashEmbedder(dim=8))
    with pytest.raises(EmbeddingMismatch):
        Pack.open("test", tmp_path, embedder=HashEmbedder(dim=384, space="other-model"))


@pytest.mark.parametrize(
    "value",
    ["' OR '1'='1", "x'); DROP TABLE memories; --", "NVDA' --", "\\'", "%", "it''s"],
)
def test_hostile_metadata_filter_values_are_escaped(unchanged, value):
    result = unchanged.search("breakout entry", metadata={"symbol": value})
    assert result.items == ()
    result = unchanged.search("breakout entry", where={"source": value})
    assert result.items == ()


def test_hostile_filter_columns_are_refused(unchanged):
    with pytest.raises(InvalidFilter):
        unchanged.search("breakout", where={"1=1 OR kind": "memory"})
    with pytest.raises(InvalidFilter):
        unchanged.search("breakout", metadata={"symbol": "a\x00b"})


def test_every_error_is_a_wolfie_error():
    for cls in (InvalidInput, InvalidReward, UnknownEpisode, ReadOnlyPack, EmbeddingMismatch):
        assert issubclass(cls, WolfieError)
