"""Phase A through LanceDB (the vector cache standing aside, as above MAX_CACHED_ROWS)
filters the found rows when enough of them pass, and prefilters when not: either way the
candidates are exactly the nearest rows that pass (packs/recall/phases.py)."""

from __future__ import annotations

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.recall import phases
from packs.store import schemas
from packs.store.scopes import visible_clause
from tests.support.packs import SeededEmbedder

DIM = 16
K1 = 10


@pytest.fixture
def pack(tmp_path):
    settings = {"delta": -1.0, "k1": K1, "k2": K1}
    with Pack.open("post", tmp_path, embedder=SeededEmbedder(DIM), settings=settings) as handle:  # type: ignore[arg-type]
        handle._svc.recall.vectors.max_rows = 0  # the cache stands aside
        handle.add_knowledge([KnowledgeChunk(f"common {i}", "common.md", i) for i in range(300)])
        handle.add_knowledge([KnowledgeChunk(f"rare {i}", "rare.md", i) for i in range(3)])
        yield handle


def exact(pack: Pack, vector: np.ndarray, clause: str) -> list[str]:
    """The truth: every row passing ``clause``, ranked by cosine with numpy."""
    rows = pack.store.scan(schemas.MEMORIES, ["id", "intent_embedding"], clause)
    matrix = np.stack(rows["intent_embedding"].to_numpy(zero_copy_only=False))
    order = np.argsort(-(matrix @ vector), kind="stable")[:K1]
    return [rows["id"][int(i)].as_py() for i in order]


@pytest.mark.parametrize("query", ["what is common", "rare thing", "anything else"])
def test_candidates_are_the_nearest_rows_that_pass_both_ways(pack, query, monkeypatch):
    calls: list[bool] = []
    search = pack.store.search

    def spy(*args, **kwargs):
        calls.append(kwargs.get("prefilter", True))
        return search(*args, **kwargs)

    monkeypatch.setattr(pack.store, "search", spy)
    vector = SeededEmbedder(DIM).embed([query])[0]
    visible = visible_clause(None)
    found = phases.phase_a(pack.store, vector, K1, visible, -1.0, pack._svc.recall.vectors)
    assert found.ids == exact(pack, vector, visible) and calls == [False]  # filtered after
    calls.clear()
    rare = f"{visible} AND source = 'rare.md'"
    found = phases.phase_a(pack.store, vector, K1, rare, -1.0, pack._svc.recall.vectors)
    assert found.ids == exact(pack, vector, rare) and calls == [False, True]  # too few: before


def test_another_scope_stays_hidden_when_its_rows_are_the_nearest(pack):
    secret = pack.remember("the vault combination", "12-34-56", scope="alice").id
    nearest = pack.search("the vault combination", k=1, scope="alice")
    assert nearest.ids == [secret]
    assert secret not in pack.search("the vault combination").ids
    assert secret not in pack.search("the vault combination", scope="bob").ids
