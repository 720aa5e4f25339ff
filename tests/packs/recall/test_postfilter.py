"""Phase A through LanceDB (the vector cache standing aside, as above MAX_CACHED_ROWS)
filters the found rows when enough of them pass, and prefilters when not: either way the
candidates are exactly the nearest rows that pass (packs/recall/phases.py)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.recall import phases
from packs.recall.candidates import RecallQuery
from packs.store import maintenance, schemas
from packs.store.scopes import visible_clause
from tests.support.internals import services_of, without_vector_cache
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

DIM = 16
K1 = 10


@pytest.fixture
def pack(tmp_path):
    settings = {"delta": -1.0, "k1": K1, "k2": K1}
    with Pack.open("post", tmp_path, embedder=SeededEmbedder(DIM), settings=settings) as handle:  # type: ignore[arg-type]
        without_vector_cache(handle)  # the cache stands aside
        handle.add_knowledge([KnowledgeChunk(f"common {i}", "common.md", i) for i in range(300)])
        handle.add_knowledge([KnowledgeChunk(f"rare {i}", "rare.md", i) for i in range(3)])
        yield handle


def exact(pack: Pack, vector: np.ndarray, clause: str) -> list[str]:
    """The truth: every row passing ``clause``, ranked by cosine with numpy."""
    rows = storage_of(pack).scan(schemas.MEMORIES, ["id", "intent_embedding"], clause)
    matrix = np.stack(rows["intent_embedding"].to_numpy(zero_copy_only=False))
    order = np.argsort(-(matrix @ vector), kind="stable")[:K1]
    return [rows["id"][int(i)].as_py() for i in order]


@pytest.mark.parametrize("query", ["what is common", "rare thing", "anything else"])
def test_candidates_are_the_nearest_rows_that_pass_both_ways(pack, query, monkeypatch):
    calls: list[bool] = []
    search = storage_of(pack).search

    def spy(*args, **kwargs):
        calls.append(kwargs.get("prefilter", True))
        return search(*args, **kwargs)

    monkeypatch.setattr(storage_of(pack), "search", spy)
    vector = SeededEmbedder(DIM).embed([query])[0]
    visible = visible_clause(None)
    found = phases.phase_a(
        storage_of(pack), RecallQuery(vector, K1, -1.0, visible), services_of(pack).recall.vectors
    )
    assert found.ids == exact(pack, vector, visible) and calls == [False]  # filtered after
    calls.clear()
    rare = f"{visible} AND source = 'rare.md'"
    found = phases.phase_a(
        storage_of(pack), RecallQuery(vector, K1, -1.0, rare), services_of(pack).recall.vectors
    )
    assert found.ids == exact(pack, vector, rare) and calls == [False, True]  # too few: before


def test_another_scope_stays_hidden_when_its_rows_are_the_nearest(pack):
    secret = pack.remember("the vault combination", "12-34-56", scope="alice").id
    nearest = pack.search("the vault combination", k=1, scope="alice")
    assert nearest.ids == [secret]
    assert secret not in pack.search("the vault combination").ids
    assert secret not in pack.search("the vault combination", scope="bob").ids


SCOPES = 30


@pytest.fixture
def scoped(tmp_path, monkeypatch):
    """1,500 chunks in 30 scopes of 50 rows, maintained: the tags index, the id BTREE and
    an IVF index of 50 partitions, so LanceDB's 20 probes leave most out (as 20 of 250 do
    at 1M) while a scope's rows lie in every partition."""
    monkeypatch.setattr(maintenance, "ROWS_PER_PARTITION", 30)
    settings = {"delta": -1.0, "k1": K1, "k2": K1}
    with Pack.open("scoped", tmp_path, embedder=SeededEmbedder(DIM), settings=settings) as handle:  # type: ignore[arg-type]
        without_vector_cache(handle)  # the cache stands aside
        chunks = [
            KnowledgeChunk(f"note {i}", "notes.md", i, metadata={"scope": f"u{i % SCOPES}"})
            for i in range(1_500)
        ]
        handle.add_knowledge(chunks)
        built = handle.upkeep.maintain(retention=timedelta(0), index_threshold=1_000)
        assert "memories.tags (label_list)" in built.indexes_built
        yield handle


def test_a_small_scope_is_searched_exactly_through_the_tags_index(scoped, monkeypatch):
    """Issue 24: a scope's few rows among many are all compared (the index's probes would
    miss some), found through the tags index without the unfiltered over-fetch."""
    calls: list[tuple[bool, bool]] = []
    search = storage_of(scoped).search

    def spy(*args, **kwargs):
        calls.append((kwargs.get("prefilter", True), kwargs.get("exact", False)))
        return search(*args, **kwargs)

    monkeypatch.setattr(storage_of(scoped), "search", spy)
    for i in range(20):
        query = f"question {i}"
        vector = SeededEmbedder(DIM).embed([query])[0]
        visible = visible_clause("u3")
        calls.clear()
        found = phases.phase_a(
            storage_of(scoped), RecallQuery(vector, K1, -1.0, visible, visible=visible)
        )
        assert found.ids == exact(scoped, vector, visible)
        assert calls[0] == (True, True)  # straight to the exact prefiltered search
        # the user's path: Pack.search in the scope ranks those same rows
        assert set(scoped.search(query, k=K1, scope="u3").ids) == set(found.ids)


def test_nothing_visible_finds_nothing_without_searching(scoped):
    """Every row is scoped: a caller without a scope sees none of them."""
    assert scoped.search("note 7", k=K1).ids == []
    assert len(scoped.search("note 7", k=K1, scope="u7").ids) == K1
