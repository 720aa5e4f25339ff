"""The eval flow on the Prefect engine: eval_runs rows that read back, and artifacts."""

from __future__ import annotations

from typer.testing import CliRunner

from evals.eval_runs import read_eval_runs, trend
from flows.cli import app
from flows.evaluation import eval_flow
from packs import Pack
from tests.support.eval_data import write_slice


def test_eval_flow_writes_eval_runs_that_read_back(tmp_path):
    data = write_slice(tmp_path / "data", {"mv", "rm"})
    eval_set = str(data / "queries.jsonl")
    first = eval_flow(pack="docs", root=str(tmp_path), eval_set=eval_set, load=str(data))
    second = eval_flow(pack="docs", root=str(tmp_path), eval_set=eval_set, ks=(3,), ragas=False)
    with Pack.open("docs", tmp_path, read_only=True) as pack:
        stored = read_eval_runs(pack)
        first_run = read_eval_runs(pack, first["run_id"])
    assert set(stored["run_id"].to_list()) == {first["run_id"], second["run_id"]}
    assert first_run.height == len(first["results"])
    row = first_run.filter((first_run["metric"] == "recall") & (first_run["k"] == 3)).row(
        0, named=True
    )
    assert row["dataset"] == "queries" and row["pack"] == "docs" and row["queries"] == 8
    assert row["pack_version"] == first["pack_version"] and row["embedding"].startswith("onnx")
    assert len(row["dataset_digest"]) == 64 and 0.0 <= row["value"] <= 1.0
    assert "non_llm_context_recall" in set(first_run["metric"].to_list())
    recall_trend = trend(stored, "recall", 3)
    assert recall_trend.height == 2 and recall_trend["value"][0] == recall_trend["value"][1]


def test_eval_flow_publishes_artifacts(tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    data = write_slice(tmp_path / "data", {"mv", "rm"})
    result = eval_flow(
        pack="arts", root=str(tmp_path), eval_set=str(data / "queries.jsonl"), load=str(data),
        ragas=False,
    )  # fmt: skip
    assert result["artifacts"] == ["eval-arts-queries", "eval-arts-queries-summary"]
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=result["artifacts"]))
        )
    assert {a.key for a in found} == set(result["artifacts"])
    summary = next(a for a in found if a.key.endswith("summary"))
    assert "memories version" in str(summary.data)


def test_wolfie_eval_command_and_eval_runs(tmp_path):
    data = write_slice(tmp_path / "data", {"mv", "rm"})
    runner = CliRunner()
    args = ["eval", "--pack", "cli", "--root", str(tmp_path), "--load", str(data),
            "--eval-set", str(data / "queries.jsonl"), "--k", "3", "--no-ragas"]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "recall" in result.output and "hit_rate" in result.output
    history = runner.invoke(app, ["eval-runs", "--pack", "cli", "--root", str(tmp_path)])
    assert history.exit_code == 0, history.output
    assert "recall@3 over eval runs" in history.output and "queries" in history.output
