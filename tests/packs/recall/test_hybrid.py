"""Hybrid Phase A: BM25's top-k1 joins the cosine top-k1 (packs/recall/lexical.py, the
in-process path; packs/store/fulltext.py, LanceDB's index), fused by reciprocal rank.

The embedder gives random vectors, so cosine cannot find a row by its words: whatever is
found by a rare word was found by the lexical side. These tests check the union and what
binds it, under rank fusion (``lexical="rrf"``), where a row first by BM25 ranks with one
first by cosine; the default blend (``zscore``) weighs BM25 at 0.4 and is measured on
real corpora (docs/recall.md).
"""

from __future__ import annotations

import pytest

from packs import KnowledgeChunk, Pack
from packs.recall.lexical import LexicalIndex
from packs.recall.ranking import RankWeights, blended_relevance, fused_relevance
from tests.support.internals import without_vector_cache
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

NEEDLE = "Melanie signed up for a pottery class on Saturday"


def _open(root, **settings):
    settings = {"lexical": "rrf", **settings}
    return Pack.open("hybrid", root, embedder=SeededEmbedder(16), settings=settings)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path):
    with _open(tmp_path) as pack:
        pack.add_knowledge(
            [KnowledgeChunk(f"we talked about topic {i}", "chat", i) for i in range(200)]
        )
        pack.add_knowledge([KnowledgeChunk(NEEDLE, "chat", 500)])
        pack.remember(
            "Caroline asked about the LGBTQ support group", "It meets on Tuesdays", scope="alice"
        )
    return tmp_path


def _texts(recall) -> list[str]:
    return [item.text for item in recall.items]


@pytest.mark.parametrize("cached", [True, False], ids=["vector-cache", "lancedb-index"])
def test_a_row_found_only_by_its_words_is_recalled_on_both_paths(root, cached):
    with _open(root) as pack:
        if cached:
            pack.search("warm the cache")  # the first search is left to LanceDB
        else:
            without_vector_cache(pack)  # the cache stands aside
        found = pack.search("When did Melanie start pottery?", k=3)
        assert _texts(found)[0] == NEEDLE
        assert found.items[0].lexical > 0
    with _open(root, lexical="off") as pack:  # cosine alone misses it
        if cached:
            pack.search("warm the cache")
        assert NEEDLE not in _texts(pack.search("When did Melanie start pottery?", k=3))


@pytest.mark.parametrize("cached", [True, False], ids=["vector-cache", "lancedb-index"])
def test_scopes_and_filters_bind_the_lexical_side(root, cached):
    with _open(root) as pack:
        if cached:
            pack.search("warm the cache")
        else:
            without_vector_cache(pack)
        query = "LGBTQ support group"
        assert "Caroline asked about the LGBTQ support group" in _texts(
            pack.search(query, scope="alice")
        )
        assert all("LGBTQ" not in t for t in _texts(pack.search(query, scope="bob")))
        assert all("LGBTQ" not in t for t in _texts(pack.search(query, kind="knowledge")))
        assert NEEDLE not in _texts(pack.search("pottery", kind="memory"))


@pytest.mark.parametrize("cached", [True, False], ids=["vector-cache", "lancedb-index"])
def test_a_new_row_is_found_by_its_words_at_once_by_another_handle(root, cached):
    with _open(root) as reader, _open(root) as writer:
        if cached:
            reader.search("warm the cache")
        else:
            without_vector_cache(reader)
        assert not any("zeppelin" in t for t in _texts(reader.search("zeppelin museum")))
        writer.add_knowledge([KnowledgeChunk("The zeppelin museum trip was in June", "chat", 900)])
        assert _texts(reader.search("zeppelin museum"))[0] == "The zeppelin museum trip was in June"


def test_a_pack_made_before_the_text_index_gets_it_when_opened_writable(root):
    from packs.store.fulltext import has_text_index

    with _open(root) as pack:
        storage_of(pack).drop_index("memories", "intent_text_idx")  # as made before it
    with Pack.open("hybrid", root, read_only=True, embedder=SeededEmbedder(16)) as pack:  # type: ignore[arg-type]
        assert not has_text_index(storage_of(pack))
        without_vector_cache(pack)
        assert pack.search("pottery").items is not None  # cosine alone, no error
    with _open(root) as pack:
        assert has_text_index(storage_of(pack))
        without_vector_cache(pack)
        assert _texts(pack.search("When did Melanie start pottery?"))[0] == NEEDLE


def test_fused_relevance_is_reciprocal_rank_fusion_by_hand():
    # a: 1st by cosine, 2nd by BM25; b: 2nd by cosine, not in BM25's list; c: 3rd by
    # cosine (found by its words), 1st by BM25. k = 60, rescaled by (k+1)/2.
    rel = fused_relevance([0.9, 0.8, 0.1], [1, -1, 0], 60)
    scale = 61 / 2
    assert rel == pytest.approx([scale * (1 / 61 + 1 / 62), scale / 62, scale * (1 / 63 + 1 / 61)])
    # A tie in similarity goes to the earlier position.
    assert list(fused_relevance([0.5, 0.5], [-1, -1], 60)) == pytest.approx([0.5, 61 / 124])


def test_blended_relevance_by_hand():
    # z(sim) = [1, -1] (std 0.1), z(bm25) = [-1, 1]; 0.4 of BM25, back in similarity units.
    weights = RankWeights(0.5, 0.1, 0.1, 0.02, 0.1, 0.1, 3.0)
    rel = blended_relevance([0.9, 0.7], [0.0, 5.0], weights, 0.4)
    assert rel == pytest.approx([0.1 * (1 - 0.4), 0.1 * (-1 + 0.4)])


def test_the_tail_scores_as_a_rebuilt_index_would():
    texts = [f"row {i} about {'cats' if i % 3 else 'dogs'} and item{i}" for i in range(300)]
    ids = [f"r{i}" for i in range(300)]
    grown = LexicalIndex(rebuild_rows=10, tail_share=0.5)
    grown.upsert(ids[:250], texts[:250])
    grown.search("warm", 1)
    grown.upsert(ids[250:], texts[250:])  # a tail of 50 over a main index of 250
    whole = LexicalIndex(rebuild_rows=10)
    whole.upsert(ids, texts)
    a, b = grown.search("dogs item260", 5), whole.search("dogs item260", 5)
    assert grown.builds == 1 and a.ids[0] == b.ids[0] == "r260"
    assert a.scores[0] == pytest.approx(b.scores[0], rel=0.05)


def test_changed_and_removed_rows_leave_the_lexical_index():
    index = LexicalIndex()
    index.upsert(["a", "b"], ["alpha words", "beta words"])
    index.upsert(["a"], ["gamma words"])  # a revised text
    assert index.search("alpha", 5).ids == []
    assert index.search("gamma", 5).ids == ["a"]
    index.remove(["b"])
    assert index.search("words", 5).ids == ["a"]
    index.retain({"nothing"})
    assert index.search("words", 5).ids == [] and index.rows == 0
