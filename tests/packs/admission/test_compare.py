"""Repeat or correction: the response checks, on hand-worked examples (pure)."""

from __future__ import annotations

import pytest

from packs.admission.compare import compare_responses, judge, tokens, values

OLD = "The staging database host is db-old.internal"


def test_a_new_host_is_a_new_value_and_a_repeat_is_not() -> None:
    moved = compare_responses(OLD, "The staging database host moved to db-new.internal", 0.885)
    assert moved.new_values == ("db-new.internal",) and not moved.same_fact(0.88)
    same = compare_responses(OLD, "It's db-old.internal, the staging database host", 0.926)
    assert same.new_values == () and same.same_fact(0.88)
    assert same.same_fact(0.95)  # below the threshold, but adds no word: said again
    other = compare_responses(OLD, "The staging database host sits behind the proxy", 0.9)
    assert other.added_words == 3 and not other.same_fact(0.95)  # below it: another fact


def test_a_shorter_repeat_adds_no_word_as_bm25_reads_them() -> None:
    """Issue 42: the same advice, shorter, is a repeat at cosine 0.79 (BM25's stems and
    stop words: "entering" is "enter", "the" none)."""
    shorter = compare_responses("Wait for a pullback before entering", "Wait for a pullback", 0.79)
    assert shorter.added_words == 0 and shorter.same_fact(0.88)
    assert (
        compare_responses("Entered on the pullback", "Enters the pullbacks", 0.8).added_words == 0
    )


def test_dropping_a_value_repeats_and_numbers_compare_as_digits() -> None:
    shorter = compare_responses("Dumps stay on /mnt/dumps for 14 days", "Dumps stay 14 days", 0.9)
    assert shorter.new_values == ()
    assert compare_responses("Ring the three bells", "ring the 3 bells", 0.99).new_values == ()
    assert compare_responses("Risk a quarter", "Risk half", 0.97).new_values == ("1/2",)


def test_values_are_digits_inner_punctuation_and_names_inside_a_sentence() -> None:
    words = tokens("Approval from Alice. Then I ask Bob about v2 on s3://bkt/x or sign-off")
    assert values(words) == ["Alice", "Bob", "v2", "s3://bkt/x"]  # "Approval", "Then", "I": no


def test_negation_and_step_order_flips() -> None:
    assert compare_responses("Use the retry flag", "Do not use the retry flag", 0.95).negation_flip
    assert not compare_responses("Never do it", "Do not ever do it", 0.9).negation_flip
    swapped = compare_responses(
        "Run the migrations first, then restart the pods",
        "Restart the pods first, then run the migrations",
        0.985,
    )
    assert swapped.order_flip and not swapped.same_fact(0.5)
    kept = compare_responses(
        "Run the migrations first, then restart the pods",
        "First run the migrations, then restart the pods",
        0.99,
    )
    assert not kept.order_flip and kept.same_fact(0.88)


def test_judge_reads_polarity_and_outcome_only_when_both_have_one() -> None:
    old = {
        "response_summary": "Entered on the retest",
        "outcome": "win +2R",
        "signal_polarity": "success",
    }
    assert judge(old, {**old, "signal_polarity": None}, 1.0, None, 0.88).repeat
    flipped = judge(old, {**old, "signal_polarity": "failure"}, 1.0, None, 0.88)
    assert not flipped.repeat and flipped.reason == "polarity success -> failure"
    loss = judge(old, {**old, "outcome": "loss -3R"}, 1.0, 0.62, 0.88)
    assert not loss.repeat and loss.reason == "outcome: new value -3R; cosine 0.62 < 0.88"
    assert judge(old, {**old, "outcome": None}, 1.0, None, 0.88).repeat


@pytest.mark.parametrize(("new", "cosine"), [(OLD, 0.0), (OLD + " behind the new proxy", 0.879)])
def test_below_the_threshold_is_another_fact(new: str, cosine: float) -> None:
    """Below the threshold only a shorter repeat (no more than one word added, cosine
    0.70 or more: issue 42) is the same fact."""
    other = compare_responses(OLD, new, cosine)
    assert not other.same_fact(0.88) and other.reason(0.88).startswith("cosine ")
