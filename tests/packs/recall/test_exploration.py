"""Learning that survives noisy rewards: recall's Thompson draw of U(m|q) lets a wrongly
punished memory be shown again (packs/recall/ranking.py ``thompson_draw``), ``search``
never explores, and a failed episode's blame is shared (packs/learning/ema.py
``failure_shares``)."""

from __future__ import annotations

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.learning.ema import failure_shares
from packs.recall.ranking import thompson_draw
from tests.support.packs import SeededEmbedder

QUESTION = "how do I rotate the signing keys"


def test_a_draw_is_wide_on_thin_evidence_narrow_on_much_and_absent_on_none():
    rng = np.random.default_rng(0)
    u = np.full(20_000, -0.5)
    thin = thompson_draw(u, np.full(u.size, 0.5), 0.4, rng)  # one reward's worth: n = 1
    much = thompson_draw(u, np.full(u.size, 0.9), 0.4, rng)  # n = 9
    none = thompson_draw(u, np.zeros(u.size), 0.4, rng)
    assert thin.std() == pytest.approx(0.4 / np.sqrt(2), rel=0.05)
    assert much.std() == pytest.approx(0.4 / np.sqrt(10), rel=0.05)
    assert np.array_equal(none, u)
    assert thin.min() >= -1.0 and thin.max() <= 1.0


def test_failure_shares_by_hand():
    shares = failure_shares({"good": 0.8, "bad": -0.6}, ["good", "bad", "new"], 0.5)
    assert shares == pytest.approx({"good": 0.6, "bad": 1.0, "new": 1.0})


def _punished(root, **settings):
    """A Pack whose best answer was punished once, at the question's exact wording."""
    pack = Pack.open(
        "explore",
        root,
        embedder=SeededEmbedder(16),  # type: ignore[arg-type]
        settings={"delta": -1.0, "k1": 6, "k2": 1, **settings},
    )
    pack.add_knowledge([KnowledgeChunk(f"runbook step {i}", "runbook.md", i) for i in range(6)])
    first = pack.recall(QUESTION)
    pack.feedback(first.episode_id or "", -1.0)  # a flipped judgement
    return pack, first.ids[0]


def test_recall_shows_a_punished_memory_again_and_search_never_does(tmp_path):
    pack, victim = _punished(tmp_path / "a", thompson_scale=0.6)
    with pack:
        assert victim not in pack.search(QUESTION).ids
        shown = sum(victim in pack.recall(QUESTION).ids for _ in range(40))
        assert 0 < shown < 40  # explored, not restored outright
        assert all(victim not in pack.search(QUESTION).ids for _ in range(10))
    pack, victim = _punished(tmp_path / "b")  # thompson_scale 0: never again
    with pack:
        assert sum(victim in pack.recall(QUESTION).ids for _ in range(40)) == 0


def test_the_seed_replays_the_draws(tmp_path):
    runs = []
    for name in ("a", "b"):
        pack, _ = _punished(tmp_path / name, thompson_scale=0.6, explore_seed=7)
        with pack:
            runs.append([pack.recall(QUESTION).ids[0] for _ in range(15)])
    assert runs[0] == runs[1]


def test_a_failure_weighs_less_on_a_memory_with_a_good_record_here(tmp_path):
    settings = {"delta": -1.0, "k1": 4, "k2": 2, "blame_relief": 1.0}
    with Pack.open("blame", tmp_path, embedder=SeededEmbedder(16), settings=settings) as pack:  # type: ignore[arg-type]
        pack.add_knowledge([KnowledgeChunk(f"note {i}", "notes.md", i) for i in range(4)])
        first = pack.recall(QUESTION)
        good = first.ids[0]
        pack.signal(first.episode_id or "", "acted_on", [good])  # it helped this question
        failed = pack.recall(QUESTION)
        assert good in failed.ids
        pack.feedback(failed.episode_id or "", -1.0)
        pack.flush()
        events = pack.query("rewards", where={"episode_id": failed.episode_id})
        weights = dict(zip(events["memory_id"], events["weight"], strict=True))
        ranked = {item.id: item.ranked_utility for item in failed.items}
        assert ranked[good] > 0
        assert weights[good] == pytest.approx(1.0 - ranked[good])
        other = next(m for m in failed.ids if m != good)
        assert weights[other] == pytest.approx(1.0 - max(0.0, ranked[other] or 0.0))
        assert pack.rebuild_utilities(write=False).changed == 0  # the log replays
