"""The MCP server's ingest runs: started in the background within the operator's policy,
at most ``max_runs`` at once, and read back by ``ingest_status``.

Each run is a separate process (``python -m wolfie.mcp.ingest_run JOB``), so a long
transcription never blocks the agent's other calls and its output never reaches the MCP
pipe. Its job, status and log files live in a folder of this server's own (mode 0700).
What a status shows an agent is redacted: a host path outside the allowed folders (a
traceback's, a temporary file's, the Pack's) reads ``<host path>``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput, TooManyRuns
from packs.extras import require
from packs.ingest.policy import IngestPolicy

# Each run is a process of ~500 MB (Prefect, the embedder, faster-whisper); five at once
# took 2.6 GiB (issue 23). Two keep a 2-core machine busy without swapping (hand-set).
DEFAULT_MAX_RUNS = 2
MAX_SOURCES = 100
LOG_TAIL_LINES = 20
LOG_TAIL_CHARS = 4_000
# An absolute path: at the start, after a space, quote, bracket or '=', or in a file:// URI.
_PATH = re.compile(r"""(?:^|(?<=[\s'"(\[=])|(?<=file://))(/[^\s'"()<>\[\],;]*)""", re.M)


@dataclass(frozen=True)
class IngestStarted:
    """``run_id`` names the run (its Prefect flow-run name); read it with ingest_status."""

    run_id: str
    pack: str
    sources: tuple[str, ...]
    scope: str | None


@dataclass(frozen=True)
class IngestStatus:
    """``state``: running, finished (every source ingested) or failed (some source
    failed, or the run ended without a status; ``errors`` and ``log_tail`` say why)."""

    run_id: str
    state: str
    sources: int
    items: int | None  # document files and media items, set when the run has ended
    ingested: int | None
    failed: int | None
    chunks: int | None  # of the ingested items
    errors: tuple[str, ...]
    log_tail: str
    seconds: float


@dataclass
class _Run:
    run_id: str
    scope: str | None
    sources: tuple[str, ...]
    process: subprocess.Popen[bytes]
    folder: Path
    started: float = field(default_factory=time.monotonic)

    @property
    def log(self) -> Path:
        return self.folder / f"{self.run_id}.log"

    @property
    def status_file(self) -> Path:
        return self.folder / f"{self.run_id}.status.json"


class IngestRuns:
    """The ingest runs one server starts for Pack ``pack`` under ``root``."""

    def __init__(
        self,
        pack: str,
        root: str | None,
        policy: IngestPolicy,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise InvalidInput(f"--max-ingest-runs must be a positive int, not {max_runs!r}.")
        self.pack, self.root, self.policy, self.max_runs = pack, root, policy, max_runs
        self._runs: dict[str, _Run] = {}
        self._folder: Path | None = None
        self._lock = threading.Lock()

    def start(self, sources: Sequence[str], scope: str | None) -> IngestStarted:
        """Check every source against the policy, then start one run for them all."""
        if isinstance(sources, str) or not sources or len(sources) > MAX_SOURCES:
            raise InvalidInput(f"sources must be a list of 1 to {MAX_SOURCES} URLs or paths.")
        if not all(isinstance(s, str) and s.strip() and "\x00" not in s for s in sources):
            raise InvalidInput("Every source must be a non-empty URL or path string.")
        checked = [self.policy.check_source(s.strip()) for s in sources]
        require("batch", "MCP ingest")  # the run is a Prefect flow
        with self._lock:  # the SDK may run two calls at once: count and start as one step
            running = [r.run_id for r in self._runs.values() if r.process.poll() is None]
            if len(running) >= self.max_runs:
                raise TooManyRuns(
                    f"{len(running)} ingest runs are still running ({', '.join(running)}), "
                    "the most this server starts at once; check them with ingest_status "
                    "and retry."
                )
            return self._launch(checked, scope)

    def _launch(self, checked: list[str], scope: str | None) -> IngestStarted:
        run_id = f"mcp-ingest-{uuid.uuid4().hex[:12]}"
        folder = self._private_folder()
        job = {
            "run_id": run_id,
            "pack": self.pack,
            "root": self.root,
            "sources": checked,
            "scope": scope,
            "policy": asdict(self.policy),
            "status": str(folder / f"{run_id}.status.json"),
        }
        job_file = folder / f"{run_id}.job.json"
        job_file.write_text(json.dumps(job), encoding="utf-8")
        command = [sys.executable, "-m", "wolfie.mcp.ingest_run", str(job_file)]
        with open(folder / f"{run_id}.log", "wb") as log:
            process = subprocess.Popen(  # a fixed command: the job is a file, never a shell
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "COLUMNS": "120"},
                start_new_session=True,
            )
        self._runs[run_id] = _Run(run_id, scope, tuple(checked), process, folder)
        return IngestStarted(run_id, self.pack, tuple(checked), scope)

    def status(self, run_id: str, scope: str | None) -> IngestStatus:
        """The state of a run this server started in ``scope``."""
        run = self._runs.get(run_id)
        if run is None or run.scope != scope:
            raise InvalidInput(
                f"No ingest run {run_id!r} in this scope on this server; use the run_id "
                "that ingest returned (runs are known to the server that started them)."
            )
        code = run.process.poll()
        report = _read_json(run.status_file)
        state = "running" if code is None else report.get("state", "failed")
        if code is not None and state == "running":
            state = "failed"  # killed, or crashed before writing its status
        errors = tuple(self.redact(str(e)) for e in report.get("errors", []))
        if state == "failed" and not errors and code is not None:
            errors = (f"the run exited with status {code} without a report; see log_tail",)
        ended = code is not None
        items, ingested, failed, chunks = (
            report.get(k) if ended else None for k in ("items", "ingested", "failed", "chunks")
        )
        return IngestStatus(
            run_id,
            state,
            len(run.sources),
            items,
            ingested,
            failed,
            chunks,
            errors,
            self._tail(run.log),
            round(time.monotonic() - run.started, 1),
        )

    def redact(self, text: str) -> str:
        """``text`` with every absolute path outside the allowed folders as <host path>."""
        roots = [root.rstrip("/") + "/" for root in self.policy.roots]

        def keep(match: re.Match[str]) -> str:
            path = match.group(1)
            inside = any(path.startswith(root) or path + "/" == root for root in roots)
            return path if inside else "<host path>"

        return _PATH.sub(keep, text)

    def _tail(self, log: Path) -> str:
        try:
            text = log.read_bytes()[-LOG_TAIL_CHARS * 4 :].decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-LOG_TAIL_LINES:]
        return self.redact("\n".join(lines))[-LOG_TAIL_CHARS:]

    def _private_folder(self) -> Path:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="wolfie-mcp-ingest-"))  # mode 0700
        return self._folder


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
