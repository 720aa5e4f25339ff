"""The structural rules of Phase B (issue 41): new questions keep what they had.

- The unrewarded ranking's top-1 keeps a slot unless this question's own evidence is
  against it, for any pool and any learned state (a property over ``score_pool``).
- A question outside the reach of every learned term ranks exactly as the never-rewarded
  Pack does (a property over real Packs and random reward streams).
- Links never fill every slot; exploration never swaps the top-1 and says it swapped.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.learning.ema import LearnedState
from packs.recall.candidates import Candidates
from packs.recall.ranking import guard_slate
from packs.recall.scoring import score_pool
from packs.settings import PackSettings


class Lookup:
    """Learned state given outright: ``U(m|q)`` and its evidence share per memory."""

    contextual = True

    def __init__(self, utility: dict[str, float], share: dict[str, float]) -> None:
        self.utilities, self.shares = utility, share

    def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        return stored, 0

    def assess(self, memory_id: str, global_q: float) -> tuple[float, float]:
        return self.utilities[memory_id], self.shares[memory_id]


def _pool(sim: list[float], lex: list[float], keys: list[float], rewarded: list[bool]):
    n = len(sim)
    ids = [f"m{i}" for i in range(n)]
    columns = {
        "id": ids,
        "kind": ["knowledge"] * n,
        "utility": [0.5 if r else 0.0 for r in rewarded],
        "confidence": [0.5 if r else 0.0 for r in rewarded],
        "reward_count": [3 if r else 0 for r in rewarded],
        "usage_count": [0] * n,
        "source": [None] * n,
        "source_position": [None] * n,
    }
    similarity = np.array(sim)
    ranked = np.maximum(similarity, np.array(keys))
    rank = np.argsort(np.argsort(-np.array(lex)))
    lexical_rank = np.where(np.array(lex) > 0, rank, -1)
    return Candidates(columns, similarity, ranked, lexical_rank, np.array(lex))


def _unrewarded_top(cand: Candidates, ranking: object) -> int:
    """The top-1 of the same pool in a Pack that was never rewarded: no links, no learned
    state (every U 0, no evidence)."""
    n = len(cand)
    plain = Candidates(
        {**cand.columns, "utility": [0.0] * n, "confidence": [0.0] * n, "reward_count": [0] * n},
        cand.similarity,
        None,
        cand.lexical_rank,
        cand.lexical,
    )
    zero = Lookup({m: 0.0 for m in cand.ids}, {m: 0.0 for m in cand.ids})
    return int(score_pool(plain, zero, ranking, 1).ranking.order[0])  # type: ignore[arg-type]


pools = st.integers(2, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.25, 1.0), min_size=n, max_size=n),
        st.lists(st.one_of(st.just(0.0), st.floats(0.1, 20.0)), min_size=n, max_size=n),
        st.lists(st.one_of(st.just(-1.0), st.floats(0.0, 1.0)), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n),
        st.lists(st.one_of(st.just(0.0), st.floats(0.01, 0.99)), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(pools, st.integers(1, 5), st.sampled_from(["zscore", "rrf", "off"]))
def test_the_unrewarded_top_1_keeps_a_slot_unless_its_own_evidence_is_against_it(pool, k2, lexical):
    sim, lex, keys, rewarded, utility, share = pool
    cand = _pool(sim, lex, keys, rewarded)
    ranking = PackSettings().replace(**{"ranking.lexical": lexical}).ranking
    learned = Lookup(
        dict(zip(cand.ids, utility, strict=True)), dict(zip(cand.ids, share, strict=True))
    )
    scored = score_pool(cand, learned, ranking, k2)
    top = _unrewarded_top(cand, ranking)
    against = share[top] > 0 and utility[top] < 0
    assert top in scored.ranking.order.tolist() or against
    assert len(scored.ranking.order) == min(k2, len(cand))
    assert len(set(scored.ranking.order.tolist())) == len(scored.ranking.order)


@settings(max_examples=200, deadline=None)
@given(pools, st.integers(1, 5))
def test_with_no_learned_term_in_reach_the_ranking_is_the_unrewarded_one(pool, k2):
    sim, lex, _keys, _rewarded, _utility, _share = pool
    n = len(sim)
    cand = _pool(sim, lex, [-1.0] * n, [False] * n)
    ranking = PackSettings().ranking
    neutral = Lookup({m: 0.0 for m in cand.ids}, {m: 0.0 for m in cand.ids})
    learned = score_pool(cand, neutral, ranking, k2).ranking.order
    plain = score_pool(cand, neutral, ranking.model_copy(update={"reserve_top": False}), k2)
    assert learned.tolist() == plain.ranking.order.tolist()


def test_links_never_fill_every_slot():
    score = np.array([3.0, 2.0, 1.0, 0.5, 0.1])
    linked = np.array([True, True, True, False, True])
    guard = guard_slate(np.array([0, 1, 2]), score, None, np.zeros(5, bool), linked, 3)
    assert guard.order.tolist() == [0, 1, 3]  # the best unlinked candidate takes the last
    one = guard_slate(np.array([0]), score, None, np.zeros(5, bool), linked, 1)
    assert one.order.tolist() == [0]  # k2=1: the one slot is the ranking's


def test_exploration_swaps_a_member_other_than_the_top_1_and_says_so():
    score = np.array([3.0, 2.0, 1.0, 0.5, 0.1])
    none = np.zeros(5, bool)
    swapped = guard_slate(np.array([0, 1, 2]), score, 0, none, none, 3, (0.01, 0.05, 0.99))
    assert swapped.order.tolist() == [0, 1, 3] and swapped.explored == 3
    assert swapped.propensity == 0.05 / 2
    kept = guard_slate(np.array([0, 1, 2]), score, 0, none, none, 3, (0.06, 0.05, 0.99))
    assert kept.order.tolist() == [0, 1, 2] and kept.explored is None


# --- the same property on real Packs and random reward streams -----------------------

DIM = 16


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


class TableEmbedder(EmbeddingProvider):
    """Texts name their vectors: ``"near i"`` in dims 0-7, ``"far i"`` in dims 8-15."""

    info = EmbeddingInfo("table", "table", "test:slate-guard", DIM)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        out = []
        for text in texts:
            side, index = text.split()[0], int(text.split()[1])
            rng = np.random.default_rng(index + (1000 if side == "far" else 0))
            v = np.zeros(DIM)
            half = slice(0, 8) if side == "near" else slice(8, 16)
            v[half] = np.abs(rng.standard_normal(8)) + 0.1
            out.append(_unit(v))
        return np.stack(out)


def _pack(root, name: str) -> Pack:
    settings = {"k1": 6, "k2": 2, "lexical": "off", "tuning.auto": False}
    pack = Pack.open(name, root, embedder=TableEmbedder(), settings=settings)  # type: ignore[arg-type]
    chunks = [KnowledgeChunk(f"near {i}", "near.md", i) for i in range(12)]
    chunks += [KnowledgeChunk(f"far {i}", "far.md", i) for i in range(12, 24)]
    pack.add_knowledge(chunks)
    return pack


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(100, 130), st.floats(-1.0, 1.0)), min_size=5, max_size=25))
def test_a_question_out_of_every_learned_terms_reach_ranks_as_the_never_rewarded_pack(
    tmp_path_factory, stream
):
    root = tmp_path_factory.mktemp("guard")
    with _pack(root, "rewarded") as pack, _pack(root, "never") as never:
        for question, reward in stream:  # rewards on near questions only
            recall = pack.recall(f"near {question}")
            pack.feedback(recall.episode_id or "", reward)
        for probe in range(200, 206):  # far questions: no reward, key or kernel reaches
            assert pack.search(f"far {probe}").ids == never.search(f"far {probe}").ids


def test_a_cold_pack_explores_logs_the_swap_and_never_in_search_or_when_opted_out(tmp_path):
    """Exploration (issue 41): with ``explore_share`` on, a share of recalls swaps one slate
    member other than the first, says so (``explored``, ``placed_by``) and logs the swap's
    propensity; ``search`` and ``recall(explore=False)`` never swap."""
    settings = {"ranking.explore_share": 0.05, "ranking.k2": 3}
    with _pack(tmp_path, "explorer") as pack:
        pack.configure(**settings)
        recalls = [pack.recall(f"near {i % 40}") for i in range(240)]
        explored = [r for r in recalls if r.explored]
        assert 3 <= len(explored) <= 30  # about 5 % of 240
        for r in explored:
            placed = [i for i in r.items if i.placed_by == "explored"]
            assert len(placed) == 1 and r.items[0].placed_by != "explored"
        logged = pack.query("retrievals", {"placed_by": "explored"})
        assert logged.height == len(explored)
        assert set(logged["propensity"].to_list()) == {0.05 / 2}  # k2=3: two members it may swap
        assert not any(pack.search(f"near {i}").explored for i in range(40))
        assert not any(pack.recall(f"near {i}", explore=False).explored for i in range(60))
