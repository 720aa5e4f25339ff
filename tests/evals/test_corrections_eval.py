"""The repeat-or-correction eval: its scoring, its data file, and the measured default."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import packs.settings
from evals.corrections import (
    CORRECTION_KINDS,
    DEFAULT_PAIRS,
    REPEAT_KINDS,
    best,
    compare_pairs,
    evaluate,
    load_pairs,
    score,
)
from packs.errors import InvalidInput


def test_score_matches_hand_counts() -> None:
    # truth: repeat, repeat, correction, correction; judged: repeat, correction, repeat, correction
    s = score([True, True, False, False], [True, False, True, False], 0.8)
    assert (s.tp, s.fn, s.fp, s.tn) == (1, 1, 1, 1)
    assert (s.precision, s.recall) == (0.5, 0.5)
    assert s.f05 == pytest.approx(0.5)
    nothing = score([True, False], [False, False], 0.9)
    assert (nothing.precision, nothing.recall, nothing.f05) == (0.0, 0.0, 0.0)


def test_best_breaks_near_ties_towards_the_lower_threshold() -> None:
    """Issue 42: a repeat stored as a correction throws away what the Pack learned, so
    of two thresholds within F05_TIE the lower (which merges more repeats) wins."""
    low, high = score([True], [True], 0.8), score([True], [True], 0.9)
    assert best([low, high]).threshold == 0.8
    worse = score([True, False], [True, True], 0.7)  # F0.5 well below: not a tie
    assert best([worse, high]).threshold == 0.9
    with pytest.raises(InvalidInput):
        best([])


def test_the_data_covers_every_domain_kind_and_split() -> None:
    pairs = load_pairs(DEFAULT_PAIRS)
    assert len(pairs) >= 240 and len({p.id for p in pairs}) == len(pairs)
    counts = Counter((p.split, p.label) for p in pairs)
    assert counts[("dev", "repeat")] == counts[("dev", "correction")] >= 90
    assert counts[("held_out", "repeat")] == counts[("held_out", "correction")] >= 30
    assert {p.kind for p in pairs if p.label == "repeat"} == set(REPEAT_KINDS)
    assert {p.kind for p in pairs if p.label == "correction"} == set(CORRECTION_KINDS)
    assert len({p.domain for p in pairs}) == 6


def test_a_malformed_line_is_refused_with_its_place(tmp_path) -> None:
    bad = tmp_path / "pairs.jsonl"
    row = json.loads(DEFAULT_PAIRS.read_text(encoding="utf-8").splitlines()[0])
    bad.write_text(json.dumps({**row, "kind": "paraphrase", "label": "correction"}) + "\n")
    with pytest.raises(InvalidInput, match=r"pairs\.jsonl:1"):
        load_pairs(bad)


@pytest.mark.slow
def test_the_default_is_the_measured_threshold_and_holds_on_held_out_pairs() -> None:
    pairs = load_pairs(DEFAULT_PAIRS)
    result = evaluate(pairs, compare_pairs(pairs))
    assert abs(result["chosen"]["threshold"] - packs.settings.DEFAULT_CORRECTION_THRESHOLD) <= 0.02
    held = result["held_out_at_default"]
    assert held["precision"] >= 0.85  # measured 0.923: 2 of 31 corrections merged
    assert held["fp"] <= 3
