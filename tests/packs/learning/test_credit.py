"""Slate credit (issue 41): an episode's reward split by each member's responsibility."""

from __future__ import annotations

import numpy as np
import pytest

from packs.learning.context import ContextIndex
from packs.learning.credit import SlateEvidence, slate_shares
from packs.settings import PackSettings

DIM = 8
SLATE = PackSettings().replace(**{"context.credit": "slate"}).context


def _q(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM] = 1.0
    return v


def test_a_success_is_split_by_relevance_and_a_failure_blames_by_irrelevance():
    shares = slate_shares({"a": 1.0, "b": 1.0}, {"a": 0.9, "b": 0.1})
    assert shares == pytest.approx({"a": 0.9, "b": 0.1})
    blame = slate_shares({"a": -1.0, "b": -1.0}, {"a": 0.9, "b": 0.1})
    assert blame == pytest.approx({"a": 0.1, "b": 0.9})
    item = slate_shares({"a": 1.0, "b": -1.0}, {"a": 0.9, "b": 0.1})
    assert item == {"a": 1.0, "b": 1.0}  # the caller's own item credit


def test_the_common_factor_of_the_successes_takes_the_credit():
    """a answered in both slates, b and c rode along once each, d and e failed with b."""
    slates = SlateEvidence()
    question = _q(0).tobytes()
    for episode, members, reward in (
        ("e1", ("a", "b"), 1.0),
        ("e2", ("a", "c"), 1.0),
        ("e3", ("b", "d"), -1.0),
    ):
        for m in members:
            slates.add(episode, question, m, reward)
    assert slates.best(question) == "a"
    assert slates.share("e1", "a") > 0.7 > 0.3 > slates.share("e1", "b")
    assert slates.share("e3", "b") > 0.6  # it shared only a failure: most of the blame


def test_an_unvaried_slate_credits_its_members_alike_and_links_only_one():
    index = ContextIndex(DIM, SLATE)
    index.loaded = True
    for epoch in range(3):
        for m in ("a", "b", "c"):
            index.add(m, _q(0), 1.0, 1.0, episode=f"e{epoch}")
    shares = [index.credited(m)[0] for m in ("a", "b", "c")]
    assert shares == pytest.approx([1 / 3] * 3)
    # one past question is a key for one memory: the first of its slate on a tie
    assert list(index.linked(_q(0))) == ["a"]


def test_episode_credit_keeps_the_whole_reward_for_each_member():
    index = ContextIndex(DIM, PackSettings().replace(**{"context.credit": "episode"}).context)
    index.loaded = True
    for m in ("a", "b", "c"):
        index.add(m, _q(0), 1.0, 1.0, episode="e0")
    assert [index.credited(m)[0] for m in ("a", "b", "c")] == [1.0, 1.0, 1.0]
    assert sorted(index.linked(_q(0))) == ["a", "b", "c"]


def test_a_loaded_index_credits_as_the_online_one():
    """Credit is a function of the kept evidence: an index that saw every reward online
    (and dropped each memory's oldest past ``history``) credits as one loaded from the
    log (each memory's newest ``history`` rewards, oldest first: ContextFeed.load)."""
    rule = SLATE
    online, loaded = ContextIndex(DIM, rule), ContextIndex(DIM, rule)
    online.loaded = loaded.loaded = True
    rng = np.random.default_rng(0)
    events = []
    for e in range(60):
        members = rng.choice(list("abcdef"), size=3, replace=False).tolist()
        reward = 1.0 if "a" in members or rng.random() < 0.1 else -1.0
        question = int(rng.integers(0, 3))
        events += [(m, question, reward, f"e{e}") for m in members]
    for m, q, r, e in events:
        online.add(m, _q(q), r, 1.0, episode=e)
    kept = set()
    for m in "abcdef":
        kept |= {i for i, ev in enumerate(events) if ev[0] == m}.difference(
            sorted(i for i, ev in enumerate(events) if ev[0] == m)[: -rule.history]
        )
    for i in sorted(kept):
        m, q, r, e = events[i]
        loaded.add(m, _q(q), r, 1.0, episode=e)
    for m in "abcdef":
        np.testing.assert_allclose(online.credited(m), loaded.credited(m))
    assert online.assess("a", _q(0), 0.0)[0] > online.assess("b", _q(0), 0.0)[0]


def test_the_prior_stays_a_probability_when_every_first_slate_failed():
    """Bug: p0 clipped to 0.02 and then rounded to a step of 0.05 became 0, and every
    posterior turned into NaN (log 0)."""
    slates = SlateEvidence()
    for q in range(30):
        for m in ("a", "b", "c"):
            slates.add(f"e{q}", _q(q).tobytes(), f"{m}{q}", -1.0)
    p0, eps = slates.prior()
    assert 0.0 < p0 <= 0.5 and 0.0 < eps < 0.5
    assert np.isfinite(slates.share("e0", "a0")) and slates.share("e0", "a0") > 0.9
