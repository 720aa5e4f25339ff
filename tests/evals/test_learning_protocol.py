"""The learning benchmark's protocol: folds, paraphrases, feedback models, the table.

No embedding here: these check the committed data and the pure parts.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evals.evalset import load_eval_set, parse_eval_set
from evals.feedback_models import FeedbackModel, reward_plan
from evals.learning import MethodRun
from evals.learning_config import BenchConfig, BenchResult
from evals.learning_report import render_markdown, summary
from evals.protocol import (
    DEFAULT_VALIDATION_SHARE,
    FOLDS,
    assign_folds,
    build_protocol,
    paraphrase_originals,
    query_folds,
)
from packs.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]
CORPORA = [ROOT / "data" / "evals" / name for name in ("manpages", "pydocs")]


@pytest.fixture(params=CORPORA, ids=lambda p: p.name)
def corpus(request: pytest.FixtureRequest) -> Path:
    return request.param


def test_folds_are_disjoint_cover_every_question_and_keep_each_role(corpus):
    eval_set = load_eval_set(corpus / "queries.jsonl")
    folds = query_folds(eval_set)
    assert set(folds) == {q.id for q in eval_set.queries}
    assert set(folds.values()) == set(FOLDS)
    validation, test = (build_protocol(eval_set, None, name) for name in FOLDS)
    for role in ("train", "heldout"):
        a = {q.id for q in getattr(validation, role)}
        b = {q.id for q in getattr(test, role)}
        assert a and b and not a & b
        everyone = {q.id for q in eval_set.queries if (q.split == "heldout") == (role == "heldout")}
        assert a | b == everyone
        assert len(a) == round(DEFAULT_VALIDATION_SHARE * len(everyone))


def test_folds_are_deterministic_by_seed_and_ignore_file_order():
    ids = [f"q{i}" for i in range(200)]
    shuffled = random.Random(7).sample(ids, len(ids))
    assert assign_folds(ids, seed=0) == assign_folds(shuffled, seed=0)
    assert assign_folds(ids, seed=0) != assign_folds(ids, seed=1)
    with pytest.raises(InvalidInput, match="validation_share"):
        assign_folds(ids, validation_share=1.0)


def test_paraphrases_reword_training_questions_and_follow_their_fold(corpus):
    eval_set = load_eval_set(corpus / "queries.jsonl")
    paraphrases = load_eval_set(corpus / "paraphrases.jsonl")
    originals = paraphrase_originals(eval_set, paraphrases)
    training = sorted(q.id for q in eval_set.queries if q.split == "train")
    assert sorted(originals.values()) == training  # every training question, exactly once
    by_id = {q.id: q for q in eval_set.queries}
    for p in paraphrases.queries:
        original = by_id[originals[p.id]]
        assert original.split == "train" and p.relevant == original.relevant
        assert p.query.lower() != original.query.lower()
    folds = query_folds(eval_set)
    for name in FOLDS:
        protocol = build_protocol(eval_set, paraphrases, name)
        played = {q.id for q in protocol.train}
        assert protocol.paraphrases
        assert {originals[p.id] for p in protocol.paraphrases} <= played
        assert all(folds[originals[p.id]] == name for p in protocol.paraphrases)


def test_each_fold_scores_300_questions_at_an_even_split(corpus):
    """Issue 29: at least 300 scored questions (played, paraphrases, held-out) per fold."""
    eval_set = load_eval_set(corpus / "queries.jsonl")
    paraphrases = load_eval_set(corpus / "paraphrases.jsonl")
    for name in FOLDS:
        sizes = build_protocol(eval_set, paraphrases, name, share=0.5).sizes()
        assert sum(sizes.values()) >= 300, (name, sizes)


def test_a_paraphrase_of_a_held_out_question_is_refused():
    eval_set = parse_eval_set(
        '{"id": "a", "query": "copy", "relevant": ["x#1"], "split": "train"}\n'
        '{"id": "b", "query": "move", "relevant": ["x#2"], "split": "heldout"}\n',
        "q",
        "q.jsonl",
    )
    bad = parse_eval_set(
        '{"id": "b~p1", "query": "relocate", "relevant": ["x#2"], '
        '"metadata": {"paraphrase_of": "b"}}\n',
        "p",
        "p.jsonl",
    )
    with pytest.raises(InvalidInput, match="rewords held-out 'b'"):
        paraphrase_originals(eval_set, bad)


@pytest.mark.parametrize(("flip", "sparse", "n"), [(0.2, 0.5, 100), (0.0, 1.0, 37), (0.5, 0.3, 9)])
def test_reward_plan_applies_the_rates_exactly(flip, sparse, n):
    plan = reward_plan(FeedbackModel(flip=flip, sparse=sparse), seed=3, epochs=4, n=n)
    rewarded = plan.rewarded.sum(axis=1)
    assert (rewarded == round(sparse * n)).all()
    assert (plan.flipped.sum(axis=1) == [round(flip * r) for r in rewarded]).all()
    assert not (plan.flipped & ~plan.rewarded).any()
    again = reward_plan(FeedbackModel(flip=flip, sparse=sparse), seed=3, epochs=4, n=n)
    assert np.array_equal(plan.flipped, again.flipped)


def test_reward_plans_differ_between_seeds_and_epochs():
    model = FeedbackModel(flip=0.2, sparse=0.5)
    a, b = (reward_plan(model, seed, 2, 50) for seed in (0, 1))
    assert not np.array_equal(a.rewarded, b.rewarded)
    assert not np.array_equal(a.rewarded[0], a.rewarded[1])


@pytest.mark.parametrize("bad", [{"flip": 1.5}, {"sparse": 0.0}, {"credit": "team"}])
def test_feedback_model_refuses_impossible_rates(bad):
    with pytest.raises(InvalidInput):
        FeedbackModel(**bad)


def _run(method: str, seed: int, train: float, para: float, held: float) -> MethodRun:
    return MethodRun(method, seed, [0.5, train], [0.5, max(train, 0.5)], para, held)


def _result() -> BenchResult:
    runs = [
        _run("no-feedback", 0, 0.60, 0.50, 0.70),
        _run("no-feedback", 1, 0.60, 0.50, 0.70),
        _run("contextual", 0, 0.70, 0.55, 0.70),
        _run("contextual", 1, 0.80, 0.65, 0.65),
    ]
    grouped = {"ranking": {"k1": 10, "k2": 3}}
    settings = {"no-feedback": grouped, "contextual": grouped}
    sizes = {"train": 10, "paraphrases": 8, "heldout": 20}
    return BenchResult(runs, settings, sizes, chunks=37, seconds=1.0)


def test_summary_lifts_are_points_over_no_feedback_in_the_same_seed():
    table = summary(_result())["contextual"]
    assert table["train_lift"]["per_seed"] == pytest.approx([0.10, 0.20])
    assert table["train_lift"]["mean"] == pytest.approx(0.15)
    assert table["paraphrases_lift"]["min"] == pytest.approx(0.05)
    assert table["heldout_lift"]["per_seed"] == pytest.approx([0.0, -0.05])


def test_table_has_a_row_per_method_and_the_lift_columns():
    text = render_markdown(_result(), BenchConfig(seeds=(0, 1)))
    rows = [line for line in text.splitlines() if line.startswith("|")]
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    assert head == [
        "method",
        "train",
        "paraphrases",
        "held-out",
        "train lift [95% CI]",
        "paraphrase lift [95% CI]",
        "held-out lift [95% CI]",
        "held-out lift per seed",
    ]
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["no-feedback", "contextual"]
    contextual = [c.strip() for c in rows[3].strip("|").split("|")]
    assert contextual[4] == "+15.0 (+10.0..+20.0)"
    assert contextual[6] == "-2.5 (-5.0..+0.0)"
    assert contextual[7] == "+0.0 / -5.0"


def test_report_and_bench_modules_import_without_a_cycle_and_stay_small():
    code = "import evals.learning_report, sys; print('evals.learning_bench' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    for path in (ROOT / "evals").glob("*.py"):
        if path.name.startswith(("learning", "protocol", "feedback_models")):
            assert len(path.read_text().splitlines()) <= 400, path


def test_committed_paraphrase_ids_name_their_original():
    for corpus in CORPORA:
        for line in (corpus / "paraphrases.jsonl").read_text().splitlines():
            row = json.loads(line)
            assert row["id"].startswith(row["metadata"]["paraphrase_of"] + "~")


def test_contextual_stays_pinned_while_default_follows_the_pack_defaults():
    from evals.learning import CONTEXTUAL, DEFAULT, TODAY, Method
    from evals.learning_bench import method_settings
    from packs.settings import PackSettings

    shared = {"context_theta": 0.5, "k2": 1}
    pinned, _ = method_settings(CONTEXTUAL, shared)
    default, _ = method_settings(DEFAULT, shared)
    assert pinned["context"]["theta"] == TODAY["context_theta"] == 0.8
    assert default["context"]["theta"] == 0.5
    assert pinned["ranking"]["k2"] == default["ranking"]["k2"] == 1
    assert default == PackSettings().replace(**shared).to_dict()
    assert Method("x", {"lam": 0.1, "no_such": 1}).known_settings() == ({"lam": 0.1}, ["no_such"])


def test_a_lifts_interval_pairs_each_question_with_itself_in_the_baseline():
    """Issue 29: every lift gets a paired bootstrap 95 % interval over questions."""
    from dataclasses import replace

    from evals.learning_report import lift_interval

    runs = _result().runs
    base = [True] * 5 + [False] * 5  # the baseline answers questions 0-4
    gained = [True] * 5 + [True, True, False, False, False]  # + questions 5 and 6
    hits = {"no-feedback": base, "contextual": gained}
    result = replace(
        _result(), runs=[replace(r, hits={"train": tuple(hits[r.method])}) for r in runs]
    )
    low, high = lift_interval(result, "contextual", "train", [0, 1])
    assert 0.0 <= low < 0.2 < high <= 0.5  # mean +0.2 (2 of 10), never below 0 here
    assert lift_interval(result, "no-feedback", "train", [0, 1]) == [0.0, 0.0]
    assert lift_interval(_result(), "contextual", "train", [0, 1]) is None  # no hits kept
