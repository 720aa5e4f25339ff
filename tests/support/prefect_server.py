"""A real ``prefect server start`` on 127.0.0.1 for tests that need schedules or the UI.

The server runs in its own process group with a private ``PREFECT_HOME`` (SQLite), with
analytics off; it is stopped (SIGTERM, then SIGKILL) when the block ends. Waiting for it
is a bounded loop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass(frozen=True)
class PrefectServer:
    url: str  # http://127.0.0.1:PORT
    env: dict[str, str]  # environment for clients of this server

    @property
    def api(self) -> str:
        return f"{self.url}/api"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def prefect_server(home: Path, startup_s: float = 180.0) -> Iterator[PrefectServer]:
    port = free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_API_HOST": "127.0.0.1",
        "PREFECT_SERVER_API_PORT": str(port),
        "PREFECT_UI_API_URL": f"http://127.0.0.1:{port}/api",
    }
    env.pop("PREFECT_API_URL", None)
    log = open(home / "server.log", "wb")  # noqa: SIM115 - closed in finally
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prefect",
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"prefect server exited: {(home / 'server.log').read_text()}")
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"prefect server not healthy after {startup_s:.0f} s")
            time.sleep(1)
        client_env = {**env, "PREFECT_API_URL": f"{url}/api"}
        yield PrefectServer(url, client_env)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()
