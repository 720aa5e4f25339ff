"""Pooling learning-benchmark runs over corpora (issue 41): one paired interval per
probe, worked out by hand on two small runs."""

from __future__ import annotations

import json

import pytest

from evals.learning_pool import main, pooled
from packs.errors import InvalidInput


def _run_file(path, mine: list[list[bool]], base: list[list[bool]]):
    runs = []
    for seed, (m, b) in enumerate(zip(mine, base, strict=True)):
        hits = {"train": m, "paraphrases": m, "heldout": m}
        runs.append({"method": "default", "seed": seed, "hits": hits})
        runs.append({"method": "no-feedback", "seed": seed, "hits": {k: b for k in hits}})
    path.write_text(json.dumps({"runs": runs}), encoding="utf-8")
    return path


def test_questions_of_every_corpus_count_once_with_their_seed_mean(tmp_path):
    # corpus a: 2 questions, seeds 0-1; lifts (+1, 0) and (+1, -1): per question +1, -0.5
    a = _run_file(tmp_path / "a.json", [[True, True], [True, False]], [[False, True]] * 2)
    # corpus b: 1 question lost in both seeds: -1
    b = _run_file(tmp_path / "b.json", [[False], [False]], [[True], [True]])
    p = pooled([a, b], "default", "heldout")
    assert p["questions"] == 3
    assert p["mean"] == pytest.approx(100 * (1.0 - 0.5 - 1.0) / 3)
    assert p["seeds"] == pytest.approx([100 * (1 + 0 - 1) / 3, 100 * (1 - 1 - 1) / 3])
    assert p["worst_seed"] == pytest.approx(-100 / 3)
    assert p["low"] <= p["mean"] <= p["high"]


def test_a_method_the_run_does_not_hold_is_a_clear_error(tmp_path, capsys):
    a = _run_file(tmp_path / "a.json", [[True]], [[False]])
    with pytest.raises(InvalidInput, match="no run of method 'slate-credit'"):
        pooled([a], "slate-credit", "train")
    assert main([str(a)]) == 0
    assert "| heldout | 1 | +100.0" in capsys.readouterr().out
    with pytest.raises(InvalidInput, match="no run of method 'episode-credit'"):
        pooled([a], "default", "train", "episode-credit")
    # against itself every lift is 0: the pairing is by question and seed
    assert pooled([a], "default", "train", "default")["mean"] == 0.0
