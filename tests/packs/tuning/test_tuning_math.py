"""The tuner's pure parts, by hand: flip rate, slate credit, the gate, questions."""

from __future__ import annotations

import numpy as np
import pytest

from packs.learning.credit import QuestionCredit, Slate, prior_relevance
from packs.learning.reliability import disagreement, flip_rate, noisy_kappa
from packs.tuning.gate import compare
from packs.tuning.questions import question_ids


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.2, 0.4])
def test_flip_rate_inverts_the_disagreement_of_two_noisy_rewards(eps):
    assert flip_rate(2 * eps * (1 - eps)) == pytest.approx(eps)


def test_disagreement_counts_pairs_of_one_memory_at_one_question():
    # 3 positives and 1 negative: 3 disagreeing pairs, 3 agreeing; 2 agreeing pseudo-pairs
    d, pairs = disagreement([(3, 1), (0, 0)])
    assert pairs == 6 and d == pytest.approx(3 / 8)


def test_a_noisy_reward_weighs_less_by_its_fisher_information():
    assert noisy_kappa(0.2, 0.0) == pytest.approx(0.2)
    assert noisy_kappa(0.2, 0.2) == pytest.approx(0.2 / 0.36)


def test_slate_credit_explains_away_the_bystanders():
    """{a, b} succeeded, {b, c} failed: b and c are not relevant, so a is; a slate
    holding only b would have failed."""
    credit = QuestionCredit(
        [Slate(("a", "b"), (1.0, 1.0)), Slate(("b", "c"), (-1.0, -1.0))], p0=0.2, eps=0.01
    )
    assert credit.relevance("a") > 0.9  # the rest: the success was a flipped failure
    assert credit.relevance("b") < 0.03 and credit.relevance("c") < 0.03
    assert credit.success(["a"]) > 0.9 and credit.success(["b"]) < 0.03
    # a memory never injected here keeps the prior
    assert credit.relevance("z") == pytest.approx(0.2)
    assert credit.success(["z"]) == pytest.approx(0.2)


def test_a_success_alone_shares_its_credit_among_the_slate():
    credit = QuestionCredit([Slate(("a", "b"), (1.0, 1.0))], p0=0.2, eps=0.01)
    # P(a | a or b) with p0 = 0.2 each: 0.2 / (1 - 0.8**2) = 0.556 (up to eps)
    assert credit.relevance("a") == pytest.approx(0.2 / 0.36, abs=0.01)
    assert credit.success(["a", "b"]) > 0.98


def test_item_credit_is_evidence_about_each_memory_on_its_own():
    credit = QuestionCredit([Slate(("a", "b"), (1.0, -0.3))], p0=0.2, eps=0.01)
    assert credit.relevance("a") > 0.9 and credit.relevance("b") < 0.01


def test_prior_relevance_from_first_episode_success():
    # 1 - (1 - p0)**3 = 0.488 -> p0 = 0.2
    assert prior_relevance(1 - 0.8**3, 3) == pytest.approx(0.2)
    assert prior_relevance(1.0, 3) == 0.5  # clipped


def test_the_gate_adopts_only_a_difference_its_bound_clears():
    rng = np.random.default_rng(0)
    base = {q: float(v) for q, v in enumerate(rng.random(60))}
    better = {q: v + 0.1 for q, v in base.items()}
    assert compare(better, base).better and compare(better, base).difference == pytest.approx(0.1)
    noise = {q: v + float(rng.normal(0, 0.2)) for q, v in base.items()}
    assert not compare(noise, base).better or compare(noise, base).low > 0
    assert not compare(base, base).better


def test_questions_merge_identical_and_nearly_identical_wording():
    a, b, c = np.eye(3, dtype=np.float32)
    near_a = (a + 0.1 * b) / np.linalg.norm(a + 0.1 * b)  # cos 0.995
    ids = question_ids(np.stack([a, b, a, near_a, c]))
    assert ids.tolist() == [0, 1, 0, 0, 2]
