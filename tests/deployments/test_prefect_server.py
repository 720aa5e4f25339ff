"""Against a real ``prefect server``: the deployments file deploys, a Wolfie flow runs,
and the UI shows the run and its artifacts in headless Chromium (a screenshot is kept
under ``out/ui/``, the repo's ignored output folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "out" / "ui"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian chromium"),
]


def run(args: list[str], env: dict[str, str], timeout: float = 600) -> str:
    result = subprocess.run(
        args, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def chromium(url: str, profile: Path, *extra: str) -> str:
    args = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, url]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    return result.stdout


def test_prefect_deploy_accepts_every_deployment(server):
    env = {**server.env, "WOLFIE_HOME": str(REPO)}
    run(
        [
            sys.executable,
            "-m",
            "prefect",
            "work-pool",
            "create",
            "wolfie",
            "--type",
            "process",
            "--overwrite",
        ],
        env,
    )
    output = run(
        [
            sys.executable,
            "-m",
            "prefect",
            "--no-prompt",
            "deploy",
            "--all",
            "--prefect-file",
            "deployments/prefect.yaml",
        ],
        env,
    )
    deployments = httpx.post(f"{server.api}/deployments/filter", json={}, timeout=30).json()
    names = {d["name"] for d in deployments}
    assert {
        "ingest-media",
        "ingest-documents",
        "recompute-utilities",
        "refresh-lessons",
        "pack-health",
        "eval-pack",
        "tune-pack",
        "maintain-pack",
    } <= names, output
    schedules = {
        d["name"]: [s["schedule"].get("cron") for s in d.get("schedules", [])] for d in deployments
    }
    assert schedules["recompute-utilities"] == ["*/15 * * * *"]
    assert schedules["maintain-pack"] == ["17 3 * * *"]
    assert schedules["tune-pack"] == ["27 4 * * *"]
    assert schedules["eval-pack"] == ["47 2 * * *"]


def test_ui_shows_a_wolfie_flow_run_and_its_artifacts(server, tmp_path):
    env = {**server.env, "WOLFIE_ROOT": str(tmp_path / "packs")}
    run([sys.executable, "-m", "wolfie.cli", "demo", "--epochs", "1"], env)
    run([sys.executable, "-c", "from flows.learning import pack_health; pack_health('demo')"], env)
    runs = httpx.post(
        f"{server.api}/flow_runs/filter",
        json={"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}},
        timeout=30,
    ).json()
    demo = next(
        r
        for r in runs
        if r["name"] and r["parameters"].get("pack") == "demo" and "epochs" in r["parameters"]
    )
    page = f"{server.url}/runs/flow-run/{demo['id']}"
    profile = tmp_path / "chromium"
    dom = chromium(page, profile, "--virtual-time-budget=20000", "--dump-dom")
    assert demo["name"] in dom, dom[-2000:]
    artifacts = {
        a["key"]: a
        for a in httpx.post(f"{server.api}/artifacts/filter", json={}, timeout=30).json()
    }
    pages = {
        key: f"{server.url}/artifacts/artifact/{artifacts[key]['id']}"
        for key in (
            "demo-success-by-epoch",
            "demo-ranking-change",
            "demo-health-chart",
            "demo-utility-extremes",
        )
    }
    expected = {
        "demo-success-by-epoch": "success_rate",
        "demo-ranking-change": "before",
        "demo-health-chart": "data:image/png;base64",
        "demo-utility-extremes": "Lowest Q",
    }
    for key, url in pages.items():
        page_dom = chromium(url, profile, "--virtual-time-budget=30000", "--dump-dom")
        assert key in page_dom and expected[key] in page_dom, (key, page_dom[-1500:])
    chart = pages["demo-health-chart"]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, url in (("flow-run.png", page), ("health-chart.png", chart)):
        shot = SCREENSHOTS / name
        shot.unlink(missing_ok=True)
        chromium(
            url,
            profile,
            "--virtual-time-budget=30000",
            "--window-size=1400,900",
            f"--screenshot={shot}",
        )
        assert shot.exists() and shot.stat().st_size > 10_000
    assert os.environ.get("PREFECT_API_URL") != server.api  # nothing leaked to this process
