"""The eval flow on the Prefect engine: eval_runs rows that read back, artifacts, the
eval set stored with the Pack, and the ``wolfie eval`` / ``wolfie eval-runs`` commands."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from evals.eval_runs import read_eval_runs, trend
from flows.demo import DEMO_DIR
from flows.evaluation import eval_flow
from packs import Pack
from packs.bundles import load_bundle
from packs.eval_sets import EvalSetNotFound
from packs.records import KnowledgeChunk
from tests.support.eval_data import write_slice
from wolfie.cli import app


def test_eval_flow_writes_eval_runs_that_read_back(tmp_path):
    data = write_slice(tmp_path / "data", {"mv", "rm"})
    eval_set = str(data / "queries.jsonl")
    first = eval_flow(pack="docs", root=str(tmp_path), eval_set=eval_set, load=str(data))
    second = eval_flow(pack="docs", root=str(tmp_path), eval_set=eval_set, ks=(3,), ragas=False)
    with Pack.open("docs", tmp_path, read_only=True) as pack:
        stored = read_eval_runs(pack)
        first_run = read_eval_runs(pack, first.run_id)
    assert set(stored["run_id"].to_list()) == {first.run_id, second.run_id}
    assert first_run.height == len(first.scored.results)
    row = first_run.filter((first_run["metric"] == "recall") & (first_run["k"] == 3)).row(
        0, named=True
    )
    assert row["dataset"] == "queries" and row["pack"] == "docs" and row["queries"] == 8
    assert row["pack_version"] == first.scored.pack_version and row["embedding"].startswith("onnx")
    assert len(row["dataset_digest"]) == 64 and 0.0 <= row["value"] <= 1.0
    assert "non_llm_context_recall" in set(first_run["metric"].to_list())
    recall_trend = trend(stored, "recall", 3)
    assert recall_trend.height == 2 and recall_trend["value"][0] == recall_trend["value"][1]


def test_eval_flow_publishes_artifacts(tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    data = write_slice(tmp_path / "data", {"mv", "rm"})
    result = eval_flow(
        pack="arts",
        root=str(tmp_path),
        eval_set=str(data / "queries.jsonl"),
        load=str(data),
        ragas=False,
    )
    assert result.artifacts == [
        "eval-arts-queries",
        "eval-arts-queries-summary",
        "eval-arts-queries-trend",
    ]
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=result.artifacts))
        )
    assert {a.key for a in found} == set(result.artifacts)
    summary = next(a for a in found if a.key.endswith("summary"))
    assert "memories version" in str(summary.data)
    chart = next(a for a in found if a.key.endswith("trend"))
    assert "1 run(s)" in str(chart.data) and "data:image/png;base64," in str(chart.data)


def test_eval_flow_defaults_to_the_eval_set_stored_with_the_demo_pack(tmp_path):
    """The eval-pack deployment runs with default parameters: the demo bundle stores its
    eval set with the Pack, and every id in it names a row of the demo Pack."""
    with Pack.open("demo", tmp_path) as pack:
        assert load_bundle(pack, DEMO_DIR).eval_set == "demo"
    first = eval_flow(pack="demo", root=str(tmp_path))
    second = eval_flow(pack="demo", root=str(tmp_path), ragas=False)
    assert first.scored.dataset == second.scored.dataset == "demo" and first.scored.queries == 13
    recall = {(r.metric, r.k): r.value for r in first.scored.results}
    assert recall["hit_rate", 10] > 0.5 and recall["recall", 10] > 0.5
    with Pack.open("demo", tmp_path, read_only=True) as pack:
        runs = read_eval_runs(pack)
        assert pack.eval_sets.read().source == str(DEMO_DIR / "eval_set.jsonl")
    assert runs["run_id"].n_unique() == 2 and set(runs["dataset"].to_list()) == {"demo"}


def test_eval_flow_without_any_eval_set_fails_clearly(tmp_path):
    with Pack.open("bare", tmp_path) as pack:
        pack.add_knowledge([KnowledgeChunk(source="s", position=0, text="some text")])
    with pytest.raises(EvalSetNotFound, match="stores no eval set"):
        eval_flow(pack="bare", root=str(tmp_path), ragas=False)
    with Pack.open("bare", tmp_path, read_only=True) as pack:
        assert read_eval_runs(pack).height == 0


def test_wolfie_eval_command_and_eval_runs(tmp_path):
    data = write_slice(tmp_path / "data", {"mv", "rm"})
    runner = CliRunner()
    args = [
        "eval",
        "--pack",
        "cli",
        "--root",
        str(tmp_path),
        "--load",
        str(data),
        "--eval-set",
        str(data / "queries.jsonl"),
        "--k",
        "3",
        "--no-ragas",
    ]
    result = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "recall" in result.output and "hit_rate" in result.output
    history = runner.invoke(app, ["eval-runs", "--pack", "cli", "--root", str(tmp_path)])
    assert history.exit_code == 0, history.output
    assert "recall@3 over eval runs" in history.output and "queries" in history.output


def test_wolfie_eval_and_eval_runs_refuse_a_missing_pack_without_creating_it(tmp_path):
    """Bug: ``--pack`` defaulted to "manpages", a Pack that need not exist, and a missing
    Pack was not reported as a usage error (exit 2)."""
    runner = CliRunner()
    for command in ("eval", "eval-runs"):
        missing = runner.invoke(app, [command, "--root", str(tmp_path)])
        assert missing.exit_code == 2 and "--pack" in missing.output, missing.output
        result = runner.invoke(app, [command, "--pack", "nope", "--root", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert "No Pack 'nope'" in result.output
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_wolfie_eval_help_explains_the_eval_set_format():
    for command in ("eval", "eval-runs"):
        result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "100"})
        assert result.exit_code == 0
        for words in ('"query" is required', '"relevant"', "source#position", "JSONL"):
            assert words in result.output, (command, words)


def test_wolfie_eval_store_keeps_the_set_for_later_runs(tmp_path):
    data = write_slice(tmp_path / "data", {"mv", "rm"})
    (data / "queries.jsonl").rename(data / "mv-rm.jsonl")  # the bundle then stores nothing
    runner = CliRunner()
    base = ["eval", "--pack", "st", "--root", str(tmp_path), "--k", "3", "--no-ragas"]
    stored = runner.invoke(
        app, [*base, "--load", str(data), "--eval-set", str(data / "mv-rm.jsonl"), "--store"]
    )
    assert stored.exit_code == 0, stored.output
    assert "Stored eval set 'mv-rm'" in stored.output
    again = runner.invoke(app, base, env={"COLUMNS": "160"})  # no --eval-set: the stored one
    assert again.exit_code == 0, again.output
    assert "mv-rm" in again.output
