"""The runtime-learning benchmark end to end on a real slice (mv and rm man pages)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from evals.evalset import load_eval_set, row_id
from evals.feedback_models import FeedbackModel, reward_plan
from evals.learning import METHODS, SIMILARITY, Method
from evals.learning_bench import run_bench
from evals.learning_config import BenchConfig
from evals.learning_report import write_outputs
from packs.errors import InvalidInput
from tests.support.storage import storage_of

PARAPHRASES = (
    Path(__file__).resolve().parents[2] / "data" / "evals" / "manpages" / "paraphrases.jsonl"
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One embedded base Pack per module: the slice is embedded once."""
    return tmp_path_factory.mktemp("bench-cache")


@pytest.fixture(scope="module")
def slice_dir(rm_mv_slice):
    """The slice with the committed paraphrases of its training questions."""
    ids = {q.id for q in load_eval_set(rm_mv_slice / "queries.jsonl").queries}
    rows = [
        line
        for line in PARAPHRASES.read_text().splitlines()
        if json.loads(line)["metadata"]["paraphrase_of"] in ids
    ]
    (rm_mv_slice / "paraphrases.jsonl").write_text("\n".join(rows) + "\n")
    return rm_mv_slice


def config(slice_dir, out, cache, **changes):
    changes = {"split": "all", "seeds": (0,), "epochs": 2, **changes}
    return BenchConfig(corpus=slice_dir, out=out, cache=cache, **changes)


def test_bench_runs_every_method_and_seed_on_the_same_contents(slice_dir, tmp_path, cache):
    methods = ("similarity", "utility", "contextual", "default")
    cfg = config(slice_dir, tmp_path, cache, methods=methods, seeds=(0, 1))
    result = run_bench(cfg)
    assert result.methods == ["no-feedback", *methods]
    assert result.sizes == {"train": 6, "paraphrases": 6, "heldout": 2} and result.chunks == 37
    assert sorted((r.method, r.seed) for r in result.runs) == sorted(
        (m, s) for m in result.methods for s in (0, 1)
    )
    assert result.settings["similarity"]["ranking"]["lam"] == 0.0
    assert result.settings["utility"]["context"]["mode"] == "global"
    assert result.settings["contextual"]["context"]["theta"] == 0.8
    baseline = result.run("no-feedback", 0)
    assert baseline.before is not None and baseline.rewards_given == 0
    for run in result.runs:
        assert all(0.0 <= r <= 1.0 for r in [*run.train_by_epoch, run.paraphrases, run.heldout])
        assert run.cumulative >= max(run.train_by_epoch)
    md, js, png = write_outputs(result, cfg)
    data = json.loads(js.read_text())
    assert set(data["summary"]) == {"no-feedback", *methods}
    assert "| contextual |" in md.read_text() and png.read_bytes().startswith(b"\x89PNG")


def test_every_method_plays_the_same_questions_in_the_same_order(slice_dir, tmp_path, cache):
    from packs import Pack

    run_bench(config(slice_dir, tmp_path, cache, methods=("utility", "contextual")))
    played = {}
    for name in ("no-feedback", "utility", "contextual"):
        with Pack.open(f"s0-{name}", tmp_path / "packs", read_only=True) as pack:
            episodes = storage_of(pack)._table("episodes").to_arrow().sort_by("created_at")
            played[name] = episodes["query_text"].to_pylist()
            assert pack.count(kind="knowledge") == 37
    assert played["no-feedback"] == played["utility"] == played["contextual"]
    assert len(played["utility"]) == 12


def _rewarded_episodes(pack_dir: Path, name: str) -> pl.DataFrame:
    from packs import Pack

    with Pack.open(name, pack_dir, read_only=True) as pack:
        log = pack.reward_log()
        episodes = pl.from_arrow(storage_of(pack)._table("episodes").to_arrow())
    return log.join(episodes, left_on="episode_id", right_on="id")


def test_flip_and_sparse_rates_reach_the_pack_as_asked(slice_dir, tmp_path, cache):
    feedback = FeedbackModel(flip=0.5, sparse=0.5)
    result = run_bench(
        config(slice_dir, tmp_path, cache, methods=("utility",), epochs=4, feedback=feedback)
    )
    plan = reward_plan(feedback, 0, 4, 6)
    run = result.run("utility", 0)
    # each epoch: round(0.5 * 6) = 3 episodes rewarded, round(0.5 * 3) = 2 of them flipped
    assert (run.rewards_given, run.rewards_flipped) == (12, 8)
    assert (int(plan.rewarded.sum()), int(plan.flipped.sum())) == (12, 8)
    relevant = {
        q.query: {row_id(r) for r in q.relevant}
        for q in load_eval_set(slice_dir / "queries.jsonl").queries
    }
    rows = _rewarded_episodes(tmp_path / "packs", "s0-utility")
    per_episode = rows.group_by("episode_id").agg(
        pl.col("value").first(), pl.col("query_text").first(), pl.col("injected_ids").first()
    )
    assert per_episode.height == 12
    wrong = sum(
        (value > 0) != bool(set(injected) & relevant[query])
        for value, query, injected in per_episode.select(
            "value", "query_text", "injected_ids"
        ).rows()
    )
    assert wrong == 8


def test_item_credit_rewards_used_and_unused_items_with_signals(slice_dir, tmp_path, cache):
    cfg = config(
        slice_dir, tmp_path, cache, methods=("contextual",), feedback=FeedbackModel(credit="item")
    )
    run_bench(cfg)
    rows = _rewarded_episodes(tmp_path / "packs", "s0-contextual")
    assert set(rows["signal"].to_list()) <= {"acted_on", "ignored", "rating"}
    assert "acted_on" in rows["signal"].to_list()
    relevant = {
        q.query: {row_id(r) for r in q.relevant}
        for q in load_eval_set(slice_dir / "queries.jsonl").queries
    }
    for signal, memory, query in rows.select("signal", "memory_id", "query_text").rows():
        if signal == "acted_on":
            assert memory in relevant[query]
        if signal == "ignored":
            assert memory not in relevant[query]


def test_no_feedback_and_similarity_give_no_rewards(slice_dir, tmp_path, cache):
    from packs import Pack

    run_bench(config(slice_dir, tmp_path, cache, methods=("similarity",)))
    for name in ("s0-no-feedback", "s0-similarity"):
        with Pack.open(name, tmp_path / "packs", read_only=True) as pack:
            assert pack.reward_log().height == 0 and pack.count("episodes") == 12


def test_methods_are_pluggable_and_checked():
    assert METHODS["similarity"] is SIMILARITY and METHODS["default"].settings == {}
    with pytest.raises(ValueError, match="credit must be one of"):
        Method("x", {}, credit="team")


def test_eval_set_that_does_not_match_the_corpus_is_refused(slice_dir, tmp_path, cache):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "copy a tree", "relevant": ["man/cp.1#18"]}\n')
    with pytest.raises(InvalidInput, match=r"line 1 \(line-1\): \['man/cp.1#18'\]"):
        run_bench(config(slice_dir, tmp_path, cache, eval_set=bad))


def test_learn_bench_command_prints_the_table(slice_dir, tmp_path, cache):
    from wolfie.cli import app

    args = [
        "learn-bench",
        "--corpus",
        str(slice_dir),
        "--out",
        str(tmp_path),
        "--epochs",
        "1",
        "--cache",
        str(cache),
        "--seeds",
        "0,1",
        "--split",
        "all",
        "--method",
        "utility",
        "--flip",
        "0.2",
        "--sparse",
        "0.5",
    ]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for text in ("| no-feedback |", "| utility |", "held-out lift", "20% flipped"):
        assert text in result.output
    assert (tmp_path / "learning.png").exists() and (tmp_path / "learning.md").exists()
    bad = CliRunner().invoke(app, [*args[:-6], "--seeds", "x"])
    assert bad.exit_code == 2 and "--seeds must list integers" in bad.output
