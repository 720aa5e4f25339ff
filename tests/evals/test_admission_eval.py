"""The admission benchmark: its stream, its seeded order, and one seed off against on."""

from __future__ import annotations

from collections import Counter

import pytest

from evals.admission import interleave, load, run_arm, summarise

STREAM, QUESTIONS = load()


def test_the_stream_mixes_every_kind_and_each_question_has_its_fact() -> None:
    kinds = Counter(item["kind"] for item in STREAM)
    assert set(kinds) == {
        "note",
        "chatter",
        "repeat",
        "correction",
        "contradiction",
        "guess",
        "outcome",
    }
    facts = {item.get("fact") for item in STREAM}
    assert {q["fact"] for q in QUESTIONS} <= facts and len(QUESTIONS) >= 50


def test_an_order_keeps_each_thread_in_order_and_depends_on_the_seed() -> None:
    first, again, other = interleave(STREAM, 0), interleave(STREAM, 0), interleave(STREAM, 1)
    assert first == again and first != other and sorted(map(str, first)) == sorted(map(str, STREAM))
    for fact in {item.get("fact") for item in STREAM} - {None}:
        mine = [item["id"] for item in first if item.get("fact") == fact]
        assert mine == [item["id"] for item in STREAM if item.get("fact") == fact]


@pytest.mark.slow
def test_with_the_policy_on_the_store_shrinks_and_recall_loses_nothing() -> None:
    arms = [run_arm(STREAM, QUESTIONS, 0, policy) for policy in ("off", "on")]
    change = summarise(arms)["change"]
    off, on = arms
    assert on.success >= off.success and on.contradictions == 0 < off.contradictions
    assert change["stored"] <= -0.25 and change["recallable"] <= -0.30  # docs/admission.md
    assert on.statuses["refused"] >= 30 and on.held >= 1
