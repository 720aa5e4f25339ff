"""``wolfie api`` as a user runs it: a spawned process on a free loopback port, found by
the URL it announces on stderr, stopped at the end."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ANNOUNCED = re.compile(r"Wolfie API serving Packs .* at (http://\S+) ")
START_TIMEOUT_S = 120


def api_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WOLFIE_API_TOKEN", "WOLFIE_ROOT")}
    env.update(HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", **extra)
    return env


@contextmanager
def api_server(
    root: str | Path,
    *packs: str,
    args: tuple[str, ...] = (),
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    command: tuple[str, ...] = (sys.executable, "-m", "wolfie.cli"),
    cwd: Path = REPO,
) -> Iterator[str]:
    """``wolfie api --pack P ... --root ROOT --port 0 ARGS``: yields its base URL.
    ``env`` is added to this process's environment, or replaces it when ``command``
    names another install (a venv's ``wolfie``)."""
    names = [a for pack in packs for a in ("--pack", pack)]
    own = command[0] == sys.executable
    full = api_env(**dict(env or {})) if own else dict(env or {})
    if token is not None:
        full["WOLFIE_API_TOKEN"] = token
    proc = subprocess.Popen(
        [*command, "api", *names, "--root", str(root), "--port", "0", *args],
        cwd=cwd,
        env=full,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield announced_url(proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def announced_url(proc: subprocess.Popen[str]) -> str:
    """The URL the server prints once it listens; its stderr is drained on after it (a
    full pipe would block the server)."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True
    ).start()
    seen: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                raise RuntimeError(f"wolfie api exited: {''.join(seen)[-3000:]}") from None
            continue
        seen.append(line)
        if match := ANNOUNCED.search(line):
            return match.group(1)
    proc.kill()
    raise RuntimeError(f"wolfie api announced no URL: {''.join(seen)[-3000:]}")
