"""Every deployment of ``deployments/prefect.yaml`` runs as deployed, twice, against a
real ``prefect server`` on 127.0.0.1:

1. served by ``wolfie serve --pack P --root R`` (one process, no work pool);
2. by a ``process`` work-pool worker after ``prefect deploy --all`` (the README's way).

Each half triggers every deployment through the API on its own copy of a Pack with
history (memories, knowledge, rewarded recalls, so lessons are due and utilities have
evidence), with a real media file and a documents folder for ingestion. Every run must
end Completed and publish its artifacts.

Bug this guards: ``flows/evals.py`` shadowed the ``evals`` package when Prefect loaded
``flows/learning.py`` as a script, so every scheduled deployment Crashed, while tests
that called the flows in-process passed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deployments.serve import load_entries
from evals.episodes import load_episodes, run_epochs
from flows.demo import DEMO_DIR, DEMO_MEDIA
from packs import Pack
from packs.bundles import load_bundle
from tests.support.prefect_runs import FinishedRun, PrefectApi, background
from tests.support.storage import storage_of

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NAMES = {entry["name"] for entry in load_entries()}
# Run order: ingestion adds rows, then the learning flows, the eval, maintenance last.
ORDER = [
    "ingest-documents",
    "ingest-media",
    "recompute-utilities",
    "refresh-lessons",
    "pack-health",
    "eval-pack",
    "tune-pack",
    "maintain-pack",
]
# What each run must publish (keys of its own artifacts; {p} is the Pack name).
EXPECTED = {
    "ingest-documents": ["ingest-documents-summary"],
    "ingest-media": ["ingest-summary"],
    "recompute-utilities": ["{p}-utilities"],
    "refresh-lessons": ["{p}-lessons", "{p}-lessons-written"],
    "pack-health": ["{p}-health", "{p}-health-chart", "{p}-utility-extremes"],
    "eval-pack": ["eval-{p}-demo", "eval-{p}-demo-summary", "eval-{p}-demo-trend"],
    "tune-pack": ["{p}-tuning"],
    "maintain-pack": ["{p}-maintenance"],
}


def test_every_deployment_is_covered():
    assert set(ORDER) == NAMES == set(EXPECTED)


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """A Pack root holding Pack "ops": the demo bundle (with its eval set) after one
    epoch of rewarded episodes; a folder of documents; a work folder for media."""
    base = tmp_path_factory.mktemp("history")
    with Pack.open("ops", base / "packs") as pack:
        loaded = load_bundle(pack, DEMO_DIR)
        run_epochs(pack, load_episodes(DEMO_DIR / "episodes.jsonl", loaded.refs), 1)
    docs = base / "docs"
    docs.mkdir()
    (docs / "risk.md").write_text(
        "# Risk\n\nRisk one percent per trade.\n\n## Stops\n\nNever widen a stop.\n",
        encoding="utf-8",
    )
    (docs / "notes.txt").write_text("Review every trade on Friday.\n", encoding="utf-8")
    return base


def fresh_root(history: Path, label: str) -> str:
    """A private copy of the Pack with history, so both halves start from the same state."""
    root = history / label
    shutil.copytree(history / "packs", root)
    return str(root)


def ingest_parameters(history: Path) -> dict[str, dict[str, Any]]:
    return {
        "ingest-documents": {"paths": [str(history / "docs")]},
        "ingest-media": {"sources": [str(DEMO_MEDIA)], "work_dir": str(history / "work")},
    }


def run_all(
    api: PrefectApi, found: dict[str, dict[str, Any]], parameters: dict[str, Any], history: Path
) -> list[FinishedRun]:
    extra = ingest_parameters(history)
    return [api.run(found[name], {**parameters, **extra.get(name, {})}) for name in ORDER]


def test_every_deployment_completes_served_and_by_a_worker(server, history, tmp_path):
    api = PrefectApi(server.api)
    env = {
        **server.env,
        "PREFECT_RUNNER_POLL_FREQUENCY": "1",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "WOLFIE_HOME": str(REPO),
    }
    env.pop("WOLFIE_ROOT", None)
    timings: dict[str, float] = {}

    # 1. wolfie serve: the Pack and root are the served deployments' parameters.
    served_root = fresh_root(history, "served")
    started = time.monotonic()
    serve_log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "wolfie.cli", "serve", "--pack", "ops", "--root", served_root]
    with background(command, env, REPO, serve_log) as process:
        found = api.wait_for_deployments(
            NAMES, process, serve_log, ready=lambda d: d["parameters"].get("root") == served_root
        )
        served = run_all(api, found, {}, history)
    timings["serve"] = time.monotonic() - started
    check_half(served, "ops", served_root)

    # 2. a process work-pool worker, after the README's `prefect deploy --all`.
    worker_root = fresh_root(history, "worker")
    started = time.monotonic()
    cli(["work-pool", "create", "wolfie", "--type", "process", "--overwrite"], env)
    cli(["--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"], env)
    worker_log = tmp_path / "worker.log"
    command = [
        sys.executable,
        "-m",
        "prefect",
        "worker",
        "start",
        "--pool",
        "wolfie",
        "--type",
        "process",
    ]
    with background(command, env, REPO, worker_log) as process:
        found = api.wait_for_deployments(
            NAMES, process, worker_log, ready=lambda d: d.get("work_pool_name") == "wolfie"
        )
        by_worker = run_all(api, found, {"pack": "ops", "root": worker_root}, history)
    timings["worker"] = time.monotonic() - started
    check_half(by_worker, "ops", worker_root)
    print(
        f"deployments: {len(NAMES)} deployments Completed under serve in "
        f"{timings['serve']:.0f} s and under a worker in {timings['worker']:.0f} s"
    )


def check_half(runs: list[FinishedRun], pack: str, root: str) -> None:
    failed = [
        f"{r.deployment}: {r.state}\n{r.logs[-3000:]}" for r in runs if r.state != "COMPLETED"
    ]
    assert not failed, "\n\n".join(failed)
    for run in runs:
        wanted = {key.format(p=pack) for key in EXPECTED[run.deployment]}
        assert wanted <= set(run.artifacts), (run.deployment, sorted(run.artifacts))
    artifacts = {r.deployment: r.artifacts for r in runs}
    assert "[template lesson]" in str(artifacts["refresh-lessons"][f"{pack}-lessons-written"])
    assert "data:image/png;base64," in artifacts["pack-health"][f"{pack}-health-chart"]
    assert "data:image/png;base64," in artifacts["eval-pack"][f"eval-{pack}-demo-trend"]
    with Pack.open(pack, root, read_only=True) as handle:
        sources = set(storage_of(handle).scan("memories", ["source"])["source"].to_pylist())
    assert any(s and s.endswith("risk.md") for s in sources), sources
    assert any(s and s.startswith("media:") for s in sources), sources


def cli(args: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "prefect", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"prefect {args}:\n{result.stdout}\n{result.stderr}"
