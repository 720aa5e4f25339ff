"""Drive deployments on a real Prefect server over its REST API, and run the processes
that execute them (``wolfie serve``, a work-pool worker) for the duration of a block.

Every wait is a bounded loop; every process runs in its own process group and is
stopped (SIGTERM, then SIGKILL) when its block ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


@dataclass(frozen=True)
class FinishedRun:
    deployment: str
    flow_run_id: str
    state: str  # a terminal state type, e.g. COMPLETED
    artifacts: dict[str, Any]  # key -> data, of this flow run only
    logs: str  # the run's log lines (for failure messages)


@contextmanager
def background(args: Sequence[str], env: dict[str, str], cwd: Path, log: Path) -> Iterator[Any]:
    """Run ``args`` in the background for the block; its output goes to ``log``."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


class PrefectApi:
    def __init__(self, api: str) -> None:
        self.api = api
        self.client = httpx.Client(base_url=api, timeout=30)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.call("POST", path, body)

    def get(self, path: str) -> Any:
        return self.call("GET", path, None)

    def call(self, method: str, path: str, body: dict[str, Any] | None, tries: int = 6) -> Any:
        """One API call; a 503 (SQLite busy under a loaded server) is retried, bounded."""
        for attempt in range(tries):
            response = self.client.request(method, path, json=body)
            if response.status_code != 503 or attempt == tries - 1:
                break
            time.sleep(2)
        response.raise_for_status()
        return response.json()

    def deployments(self, names: set[str]) -> dict[str, dict[str, Any]]:
        """The deployments named ``names`` (name -> deployment), newest update wins."""
        found = self.post("/deployments/filter", {"deployments": {"name": {"any_": sorted(names)}}})
        found.sort(key=lambda d: d["updated"])
        return {d["name"]: d for d in found}

    def wait_for_deployments(
        self,
        names: set[str],
        process: subprocess.Popen[bytes],
        log: Path,
        ready: Any = None,
        timeout_s: float = 180,
    ) -> dict[str, dict[str, Any]]:
        """Poll until every deployment in ``names`` exists (and ``ready(d)`` holds)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.deployments(names)
            if set(found) == names and all(ready is None or ready(d) for d in found.values()):
                return found
            if process.poll() is not None:
                raise RuntimeError(f"{process.args} exited:\n{log.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"deployments {sorted(names - set(found))} not ready:\n"
                    f"{log.read_text()[-4000:]}"
                )
            time.sleep(1)

    def run(
        self, deployment: dict[str, Any], parameters: dict[str, Any], timeout_s: float = 300
    ) -> FinishedRun:
        """Create a run of ``deployment``, wait until it ends, return it with artifacts."""
        created = self.post(
            f"/deployments/{deployment['id']}/create_flow_run", {"parameters": parameters}
        )
        deadline = time.monotonic() + timeout_s
        while True:
            run = self.get(f"/flow_runs/{created['id']}")
            state = (run.get("state") or {}).get("type")
            if state in TERMINAL:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{deployment['name']} still {state} after {timeout_s:.0f} s")
            time.sleep(1)
        artifacts = self.post(
            "/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [created["id"]]}}}
        )
        logs = self.post("/logs/filter", {"logs": {"flow_run_id": {"any_": [created["id"]]}}})
        return FinishedRun(
            deployment["name"],
            created["id"],
            state,
            {a["key"]: a["data"] for a in artifacts if a.get("key")},
            "\n".join(f"{entry['level']} {entry['message']}" for entry in logs),
        )
