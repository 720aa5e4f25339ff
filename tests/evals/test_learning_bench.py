"""The runtime-learning benchmark end to end on a real slice (mv and rm man pages)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evals.learning import METHODS, SIMILARITY, UTILITY_ITEM, Method
from evals.learning_bench import BenchConfig, run_bench
from evals.learning_report import write_outputs
from packs.errors import InvalidInput


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One embedded base Pack per module: the slice is embedded once."""
    return tmp_path_factory.mktemp("bench-cache")


def config(slice_dir, out, cache, **changes):
    return BenchConfig(
        corpus=slice_dir, eval_set=slice_dir / "queries.jsonl", out=out, cache=cache,
        epochs=2, **changes,
    )  # fmt: skip


def test_bench_runs_methods_on_the_same_contents_and_writes_reports(rm_mv_slice, tmp_path, cache):
    methods = ("similarity", "utility", "utility-item", "contextual")
    cfg = config(rm_mv_slice, tmp_path, cache, methods=methods)
    result = run_bench(cfg)
    assert [r.method for r in result.runs] == list(methods)
    assert (result.train, result.heldout, result.chunks) == (6, 2, 37)
    baseline = result.runs[0]
    # similarity-only ranking ignores rewards: every epoch ranks the same way
    assert baseline.train_by_epoch == [baseline.train_before] * 2
    assert baseline.heldout_by_epoch == [baseline.heldout_by_epoch[0]] * 3
    assert result.settings["similarity"]["lam"] == 0.0 and result.settings["utility"]["lam"] == 0.5
    assert result.settings["utility"]["utility_mode"] == "global"
    for run in result.runs:
        assert all(0.0 <= r <= 1.0 for r in run.train_by_epoch + run.heldout_by_epoch)
        assert run.cumulative_by_epoch[-1] >= max(run.train_by_epoch)
    json_path, md_path, png_path = write_outputs(result, cfg)
    data = json.loads(json_path.read_text())
    assert [row["method"] for row in data["summary"]] == list(methods)
    assert "| utility − similarity |" in md_path.read_text()
    assert png_path.read_bytes().startswith(b"\x89PNG")


def test_every_method_plays_the_same_queries_in_the_same_order(rm_mv_slice, tmp_path, cache):
    from packs import Pack

    run_bench(config(rm_mv_slice, tmp_path, cache, methods=("similarity", "utility")))
    played = {}
    for name in ("similarity", "utility"):
        with Pack.open(name, tmp_path / "packs", read_only=True) as pack:
            episodes = pack.store._table("episodes").to_arrow().sort_by("created_at")
            played[name] = episodes["query_text"].to_pylist()
            assert pack.count(kind="knowledge") == 37
    assert played["similarity"] == played["utility"] and len(played["utility"]) == 12


def test_item_credit_rewards_each_injected_item_by_its_relevance(rm_mv_slice, tmp_path, cache):
    from packs import Pack

    run_bench(config(rm_mv_slice, tmp_path, cache, methods=("utility-item",)))
    with Pack.open("utility-item", tmp_path / "packs", read_only=True) as pack:
        values = set(pack.reward_log()["value"].to_list())
    assert UTILITY_ITEM.credit == "item" and values <= {1.0, -1.0}


def test_no_feedback_method_gives_no_rewards(rm_mv_slice, tmp_path, cache):
    from packs import Pack

    run_bench(config(rm_mv_slice, tmp_path, cache, methods=("no-feedback",)))
    with Pack.open("no-feedback", tmp_path / "packs", read_only=True) as pack:
        assert pack.reward_log().height == 0 and pack.count("episodes") == 12


def test_methods_are_pluggable_and_checked():
    assert METHODS["similarity"] is SIMILARITY
    with pytest.raises(ValueError, match="credit must be one of"):
        Method("x", {}, credit="team")


def test_eval_set_that_does_not_match_the_corpus_is_refused(rm_mv_slice, tmp_path, cache):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "copy a tree", "relevant": ["man/cp.1#18"]}\n')
    cfg = BenchConfig(corpus=rm_mv_slice, eval_set=bad, out=tmp_path, cache=cache, epochs=1)
    with pytest.raises(InvalidInput, match=r"line 1 \(line-1\): \['man/cp.1#18'\]"):
        run_bench(cfg)


def test_learn_bench_command_prints_both_methods_side_by_side(rm_mv_slice, tmp_path, cache):
    from flows.cli import app

    args = ["learn-bench", "--corpus", str(rm_mv_slice), "--out", str(tmp_path), "--epochs", "2",
            "--cache", str(cache)]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for text in ("similarity", "utility − similarity", "last epoch", "held-out"):
        assert text in result.output
    assert (tmp_path / "learning.png").exists()
