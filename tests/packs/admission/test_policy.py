"""Admission control's decisions on hand-worked cases (pure functions)."""

from __future__ import annotations

import pytest

from packs.admission.compare import compare_responses
from packs.admission.policy import (
    Neighbour,
    content_words,
    empty_reason,
    hold_reason,
    predicted_utility,
    reworded_correction,
)
from packs.recall.lexical import stems


def test_chatter_has_no_content_words_and_a_note_has_several() -> None:
    assert content_words("ok, thanks! sounds good") == []
    assert content_words("The staging DB host is db-old.internal") == [
        "stage",
        "db",
        "host",
        "db",
        "old",
        "internal",
    ]
    assert empty_reason("hi", "thanks!", 3) == (
        "boilerplate: 0 content words in the intent and response (the Pack's "
        "admission.min_content_words is 3)"
    )
    assert empty_reason("Deploy", "Ran it", 3) is not None  # 2 content words: "deploy", "ran"
    assert empty_reason("Deploy failed", "Ran it", 3) is None


def test_content_words_are_bm25s_words_less_the_chatter() -> None:
    """One tokeniser: BM25's stop words and stems (packs.recall.lexical.stems), then the
    chatter stems out, so "Approved" and "approves" are one word, "into" (a bm25s stop
    word) none, and "thanks" and "thank you" chatter."""
    text = "Alice approves releases; it went into production. Approved! thanks, thank you"
    assert content_words(text) == [w for w in stems(text) if w not in {"thank", "you"}]
    assert content_words(text) == ["alic", "approv", "releas", "went", "product", "approv"]
    assert content_words("The notes are noted") == ["note", "note"]  # "noted" is no chatter


def test_predicted_utility_is_the_similarity_weighted_track_record() -> None:
    near = [Neighbour(0.9, -0.6, 3), Neighbour(0.6, 0.3, 1), Neighbour(0.8, 0.9, 0)]
    # the unrewarded one counts for nothing: (0.9 * -0.6 + 0.6 * 0.3) / 1.5 = -0.24
    assert predicted_utility(near, 2) == pytest.approx(-0.24)
    assert predicted_utility(near, 3) is None  # two rewarded neighbours are too few
    assert predicted_utility([Neighbour(-0.2, -1.0, 5), Neighbour(0.5, -0.5, 2)], 1) == -0.5


def test_hold_reasons_name_the_factor() -> None:
    assert hold_reason(0.3, None, 0.5, -0.3) == "the caller's confidence 0.30 is below 0.50"
    assert hold_reason(None, -0.42, 0.5, -0.3) == (
        "its nearest rewarded memories predict a utility of -0.42, below -0.30"
    )
    assert hold_reason(0.5, -0.3, 0.5, -0.3) is None  # at the floor is not below it
    assert hold_reason(None, None, 0.5, -0.3) is None


def test_a_reworded_correction_keeps_the_subject_and_changes_a_value() -> None:
    old = "Production releases are approved by Alice Moreau"
    new = compare_responses(old, "Production releases are now approved by Bob Tanaka", 0.62)
    assert reworded_correction(new, 0.74, 0.70, 0.6)
    assert not reworded_correction(new, 0.69, 0.70, 0.6)  # the intents are too far apart
    other = compare_responses(
        "The billing database runs on pg-billing-1.internal",
        "The billing API runs on api-billing-1.internal",
        0.65,
    )
    assert other.dropped == ("database",) and not reworded_correction(other, 0.84, 0.7, 0.6)
    same = compare_responses(old, "Alice Moreau approves production releases", 0.93)
    assert not reworded_correction(same, 0.9, 0.7, 0.6)  # no new value: not a correction
