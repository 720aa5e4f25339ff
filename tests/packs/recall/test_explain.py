"""recall(..., explain=True): each item says why it ranked there, and the explanation is
true: re-adding its terms gives recall's order (packs/recall/explain.py, issue 44)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidInput
from packs.learning.ema import LearnedState
from packs.recall.candidates import Candidates
from packs.recall.explain import explain_pool, term_sum
from packs.recall.scoring import score_pool
from packs.settings import PackSettings
from tests.support.packs import SeededEmbedder

TOL = 1e-9  # float noise of re-adding five terms in another order


class _Learned:
    """A learned lookup with given utilities (U(m|q), evidence share) per memory."""

    def __init__(self, assessed: dict[str, tuple[float, float]], contextual: bool) -> None:
        self.assessed = assessed
        self.contextual = contextual

    def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        return stored, 0

    def assess(self, memory_id: str, global_q: float) -> tuple[float, float]:
        return self.assessed[memory_id] if self.contextual else (global_q, 0.0)


def _pool(draw: st.DrawFn) -> tuple[Candidates, _Learned]:
    n = draw(st.integers(1, 12))
    unit = st.floats(-1.0, 1.0, allow_nan=False)
    sim = np.array(draw(st.lists(unit, min_size=n, max_size=n)))
    ids = [f"m{i}" for i in range(n)]
    columns = {
        "id": ids,
        "kind": [draw(st.sampled_from(["memory", "knowledge"])) for _ in ids],
        "utility": draw(st.lists(unit, min_size=n, max_size=n)),
        "confidence": draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)),
        "reward_count": draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)),
        "usage_count": draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)),
        "source": [draw(st.sampled_from([None, "doc.md"])) for _ in ids],
        "source_position": list(range(n)),
        "experience_summary": [None] * n,
        "signal_polarity": [None] * n,
    }
    ranked = None
    if draw(st.booleans()):  # some memories linked by a past question's key
        keys = np.array(draw(st.lists(unit, min_size=n, max_size=n)))
        ranked = np.maximum(sim, keys)
    lexical_rank = lexical = None
    if draw(st.booleans()):  # BM25 joined Phase A
        order = draw(st.permutations(range(n)))
        cut = draw(st.integers(0, n))
        lexical_rank = np.full(n, -1, dtype=np.int64)
        lexical = np.zeros(n)
        for place, i in enumerate(order[:cut]):
            lexical_rank[i], lexical[i] = place, float(cut - place)
    assessed = {m: (draw(unit), draw(st.floats(0.0, 0.99))) for m in ids}
    cand = Candidates(columns, sim, ranked, lexical_rank, lexical)
    return cand, _Learned(assessed, draw(st.booleans()))


@st.composite
def _case(draw: st.DrawFn) -> tuple[Candidates, _Learned, PackSettings, int, bool]:
    cand, learned = _pool(draw)
    s = PackSettings.model_validate(
        {
            "lexical": draw(st.sampled_from(["zscore", "rrf", "off"])),
            "lam": draw(st.floats(0.0, 1.0)),
            "w_confidence": draw(st.floats(0.0, 1.0)),
            "spread": draw(st.sampled_from([0.0, 0.3])),
            "inhibition": draw(st.sampled_from([0.0, 0.2])),
        }
    )
    return cand, learned, s, draw(st.integers(1, 12)), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(_case())
def test_re_adding_the_terms_gives_the_score_and_the_order(case):
    cand, learned, s, k2, explore = case
    rng = np.random.default_rng(0) if explore else None
    scored = score_pool(cand, learned, s.ranking, k2, rng)
    explains = explain_pool(
        cand, scored, learned, s.ranking, explore=explore, indices=range(len(cand))
    )
    sums = np.array([term_sum(explains[i]) for i in range(len(cand))])
    inhibited = np.array([explains[i]["phase_b"]["terms"]["inhibition"] for i in range(len(cand))])
    assert np.allclose(sums, scored.ranking.score + inhibited, rtol=0, atol=TOL)
    assert np.allclose(sums, [explains[i]["phase_b"]["score"] for i in range(len(cand))])
    slate = [int(i) for i in scored.ranking.order]
    assert len(slate) == min(k2, len(cand))
    # an item a structural rule placed (issue 41) says so; the others stand by their sums
    placed = [i for i in slate if explains[i]["placement"]["placed_by"] is not None]
    assert all(scored.guard is not None and scored.guard.placed_by(i) for i in placed)
    order = [i for i in slate if i not in placed]
    assert all(sums[a] >= sums[b] - TOL for a, b in itertools.pairwise(order))
    rest = np.setdiff1d(np.arange(len(cand)), slate)
    if len(rest) and order and not placed:
        assert sums[rest].max() <= sums[order[-1]] + TOL
    for place, i in enumerate(slate, 1):
        assert explains[i]["phase_b"]["rank"] == place


def _pack(root, **settings):
    pack = Pack.open(
        "explain",
        root,
        embedder=SeededEmbedder(16),  # type: ignore[arg-type]
        settings={"delta": -1.0, "k1": 8, "k2": 4, **settings},
    )
    return pack


@pytest.mark.parametrize("mode", ["contextual", "global"])
def test_the_evidence_names_the_past_question_its_reward_and_weight(tmp_path, mode):
    with _pack(tmp_path, utility_mode=mode) as pack:
        for i in range(6):
            pack.remember(f"how to rotate key {i}", f"run rotate --key {i}")
        past = pack.recall("how to rotate key 3")
        pack.feedback(past.episode_id or "", 1.0)
        found = pack.search("how to rotate key 3", 6, explain=True)
        item = next(i for i in found.items if i.id == past.ids[0])
        assert item.explain is not None
        evidence = item.explain["utility"]["evidence"]
        assert [e["question"] for e in evidence] == ["how to rotate key 3"]
        assert evidence[0]["episode_id"] == past.episode_id
        assert evidence[0]["reward"] == pytest.approx(1.0)
        assert evidence[0]["similarity"] == pytest.approx(1.0, abs=1e-2)
        assert evidence[0]["weight"] > 0
        side = item.explain["phase_a"]
        assert side["similarity"] == pytest.approx(item.similarity)
        assert term_sum(item.explain) == pytest.approx(item.explain["phase_b"]["score"], abs=TOL)
        unrewarded = [i for i in found.items if i.reward_count == 0]
        assert unrewarded and all(i.explain["utility"]["evidence"] == [] for i in unrewarded)


def test_without_explain_the_result_is_what_it_was(tmp_path):
    with _pack(tmp_path) as pack:
        for i in range(6):
            pack.remember(f"deploy step {i}", f"kubectl apply {i}")
        pack.search("deploy step 2")  # the first search after writes reads BM25 another way
        plain = pack.search("deploy step 2")
        explained = pack.search("deploy step 2", explain=True)
        assert "explain" not in plain.items[0].to_dict()
        assert "explain" in explained.items[0].to_dict()
        assert [(i.id, i.score) for i in plain.items] == [(i.id, i.score) for i in explained.items]
        with pytest.raises(InvalidInput, match="explain"):
            pack.search("deploy step 2", explain="yes")  # type: ignore[arg-type]


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rewards=st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=6),
    lexical=st.sampled_from(["zscore", "rrf", "off"]),
)
def test_on_a_pack_the_explained_terms_give_recalls_order(tmp_path_factory, rewards, lexical):
    root = tmp_path_factory.mktemp("pack")
    with _pack(root, lexical=lexical, explore_bonus=0.1) as pack:
        for i in range(8):
            pack.remember(f"question about topic {i % 3} number {i}", f"answer {i}")
        chunks = [
            KnowledgeChunk(f"topic {i % 3} runbook step {i}", "runbook.md", i) for i in range(5)
        ]
        pack.add_knowledge(chunks)  # unrewarded knowledge: a bonus; neighbours: inhibition
        for j, rating in enumerate(rewards):
            episode = pack.recall(f"question about topic {j % 3}")
            pack.feedback(episode.episode_id or "", rating)
        found = pack.recall("question about topic 1", 8, explain=True)
        sums = [term_sum(item.explain or {}) for item in found.items]
        inhibited = [(item.explain or {})["phase_b"]["terms"]["inhibition"] for item in found.items]
        scores = [item.score + cut for item, cut in zip(found.items, inhibited, strict=True)]
        assert sums == pytest.approx(scores, abs=TOL)
        by_score = [
            s
            for s, item in zip(sums, found.items, strict=True)
            if (item.explain or {})["placement"]["placed_by"] is None
        ]
        assert all(a >= b - TOL for a, b in itertools.pairwise(by_score))
        assert [item.explain["phase_b"]["rank"] for item in found.items] == list(
            range(1, len(found.items) + 1)
        )
