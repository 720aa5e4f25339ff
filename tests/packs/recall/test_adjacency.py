"""Adjacency links (packs/recall/spread.py): a matched chunk's neighbours in its source
join Phase A, activation spreads to them, and lateral inhibition keeps one passage from
filling every slot.

The embedder gives random vectors, so the reply turn below can only be reached through
the question turn next to it: the query is the question's own words, and the reply
shares none of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidSettings
from packs.recall.spread import distances, inhibited_order, neighbour_ids, spread
from packs.store.rows import knowledge_id
from tests.support.internals import without_vector_cache
from tests.support.packs import SeededEmbedder

QUESTION = "Melanie: what did you do on Saturday?"
REPLY = "Caroline: I went to the zoo with the kids"
QUERY = QUESTION  # the question turn is found at once; the reply only through it


def _open(root, **settings):
    return Pack.open("adjacent", root, embedder=SeededEmbedder(16), settings=settings)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    path = tmp_path_factory.mktemp("adjacent")
    with _open(path) as pack:
        filler = [KnowledgeChunk(f"we talked about topic {i}", "chat/a", 10 * i) for i in range(40)]
        pack.add_knowledge(
            [
                *filler,
                KnowledgeChunk(QUESTION, "chat/b", 10, metadata={"speaker": "Melanie"}),
                KnowledgeChunk(REPLY, "chat/b", 11, metadata={"speaker": "Caroline"}),
                KnowledgeChunk("Melanie: see you on Saturday", "chat/c", 0),
            ]
        )
    return path


def _texts(found) -> list[str]:
    return [item.text for item in found.items]


@pytest.mark.parametrize("cached", [True, False], ids=["vector-cache", "lancedb-index"])
def test_the_reply_next_to_a_matched_turn_is_recalled_through_its_neighbour(root, cached):
    with _open(root, spread=1.0) as pack:
        if cached:
            pack.search("warm the cache")  # the first search is left to LanceDB
        else:
            without_vector_cache(pack)  # the cache stands aside
        found = _texts(pack.search(QUERY, k=3))
        assert QUESTION in found and REPLY in found
        # a filter binds the neighbours too: the reply is Caroline's
        assert REPLY not in _texts(pack.search(QUERY, k=3, metadata={"speaker": "Melanie"}))
    with _open(root) as pack:  # without spreading, nothing reaches the reply
        if cached:
            pack.search("warm the cache")
        assert REPLY not in _texts(pack.search(QUERY, k=3))


def test_spread_by_hand():
    # one source at positions 0, 1, 2; a fourth row in another source
    dist = distances(["s", "s", "s", "t"], [0, 1, 2, 0])
    assert np.isinf(np.diag(dist)).all() and np.isinf(dist[0, 3])
    out = spread(np.array([2.0, 0.0, -1.0, 1.0]), dist, 0.5, 0.5, 2)
    # row 1: half of row 0's 2 (row 2 is negative: it passes nothing)
    # row 2: half of row 0's 2 at distance 2, decayed by 0.5; row 1 passes 0
    # row 0 gets nothing from rows 1 (0) and 2 (negative); row 3 is alone
    assert out == pytest.approx([2.0, 1.0, -0.5, 1.0])
    assert spread(np.array([2.0, 0.0]), distances(["s", "s"], [0, 1]), 0.5, 0.5, 0)[1] == 0.0


def test_memories_have_no_neighbours():
    dist = distances([None, "s", "s"], [None, 0, 1])
    assert np.isinf(dist[0]).all() and dist[1, 2] == 1.0
    assert neighbour_ids([None, "s"], [None, 0], [0, 1], 2) == [
        knowledge_id("s", 1),
        knowledge_id("s", 2),
    ]


def test_lateral_inhibition_leaves_a_slot_for_another_passage():
    score = np.array([3.0, 2.9, 1.0])  # rows 0 and 1 are one passage, row 2 another
    dist = distances(["s", "s", "t"], [4, 5, 0])
    assert list(inhibited_order(score, dist, 0.0, 1, 2)) == [0, 1]
    assert list(inhibited_order(score, dist, 2.0, 1, 2)) == [0, 2]
    assert list(inhibited_order(score, dist, 2.0, 1, 5)) == [0, 2, 1]  # all, when asked


def test_neighbour_ids_are_nearest_first_and_never_negative():
    ids = neighbour_ids(["s", "s"], [0, 7], [0, 1], 2)
    expected = [knowledge_id("s", p) for p in (1, 6, 8, 2, 5, 9)]
    assert ids == expected


@pytest.mark.parametrize(
    "bad", [{"spread": -0.1}, {"spread_hops": 9}, {"inhibition": float("nan")}]
)
def test_bad_spread_settings_are_refused(tmp_path, bad):
    with pytest.raises(InvalidSettings):
        _open(tmp_path, **bad)
