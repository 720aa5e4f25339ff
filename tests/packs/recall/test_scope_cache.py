"""A scope's rows held in memory when the Pack is too large to hold whole (issue 24,
packs/recall/scope_cache.py): exact, kept current, other scopes hidden, bounded."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.recall import scope_cache
from packs.recall.indexed import CANDIDATE_COLUMNS
from packs.store import schemas
from packs.store.lifecycle import EXPIRES
from packs.store.scopes import visible_clause
from tests.support.internals import services_of, without_vector_cache
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

DIM = 16
RECALLED = [*CANDIDATE_COLUMNS, EXPIRES]  # what a recall caches (with expiry)
K1 = 10
SCOPES = 30


@pytest.fixture
def pack(tmp_path):
    """1,500 chunks in 30 scopes of 50 rows and 20 shared ones, maintained (the tags
    index), with the Pack's own cache standing aside as above MAX_CACHED_ROWS."""
    settings = {"delta": -1.0, "k1": K1, "k2": K1}
    with Pack.open("scopes", tmp_path, embedder=SeededEmbedder(DIM), settings=settings) as handle:  # type: ignore[arg-type]
        without_vector_cache(handle)
        handle.add_knowledge(
            KnowledgeChunk(f"note {i}", "notes.md", i, metadata={"scope": f"u{i % SCOPES}"})
            for i in range(1_500)
        )
        handle.add_knowledge(KnowledgeChunk(f"shared {i}", "faq.md", i) for i in range(20))
        handle.upkeep.maintain(retention=timedelta(0), index_threshold=1_000)
        yield handle


def truth(pack: Pack, query: str, scope: str) -> set[str]:
    rows = storage_of(pack).scan(
        schemas.MEMORIES, ["id", "intent_embedding"], visible_clause(scope)
    )
    matrix = np.stack(rows["intent_embedding"].to_numpy(zero_copy_only=False))
    order = np.argsort(-(matrix @ SeededEmbedder(DIM).embed([query])[0]))[:K1]
    return {rows["id"][int(i)].as_py() for i in order}


def test_a_scope_is_searched_exactly_in_memory_and_kept_current(pack):
    caches = services_of(pack).recall.scopes
    for i in range(10):
        query = f"question {i}"
        assert set(pack.search(query, k=K1, scope="u3").ids) == truth(pack, query, "u3")
    assert len(caches) == 1  # one load, then reused
    cache = caches.get(storage_of(pack), visible_clause("u3"), RECALLED)
    assert cache is not None and cache.rows == 50 + 20 and cache.reloads == 1
    mine = pack.add_knowledge(
        [KnowledgeChunk("the vault is in room 7", "new.md", 0, metadata={"scope": "u3"})]
    )[0]
    theirs = pack.add_knowledge(
        [KnowledgeChunk("the vault is in room 9", "new.md", 1, metadata={"scope": "u4"})]
    )[0]
    found = pack.search("the vault is in room 7", k=K1, scope="u3").ids
    assert found[0] == mine and theirs not in found  # caught up, the other scope hidden
    assert cache.rows == 71 and cache.reloads == 1
    assert pack.search("the vault is in room 9", k=1, scope="u4").ids == [theirs]


def test_scopes_are_dropped_least_recently_used_and_large_ones_left_to_lancedb(pack, monkeypatch):
    monkeypatch.setattr(scope_cache, "SCOPE_BUDGET_ROWS", 150)  # two scopes of 70 rows
    pack.search("warm up")  # a new handle's first search is LanceDB's (the deferred load)
    for scope in ("u1", "u2", "u3"):
        pack.search("question", k=K1, scope=scope)
    caches = services_of(pack).recall.scopes._caches  # private: their LRU order is the test
    assert list(caches) == [visible_clause("u2"), visible_clause("u3")]
    monkeypatch.setattr(scope_cache, "SCOPE_ROWS", 60)  # u5's 70 rows are too many
    assert set(pack.search("question 5", k=K1, scope="u5").ids) == truth(pack, "question 5", "u5")
    assert visible_clause("u5") not in caches
