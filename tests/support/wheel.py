"""The package as a user installs it: a wheel built from the source tree, installed with
its dependencies into a fresh venv far from the checkout, run from an empty folder.

The wheel is built from a copy of the source tree (no ``build/`` left over from an
earlier build, no ``.venv``, no ``node_modules``), so it holds exactly what the sources
declare. pip installs from the configured indexes and reuses its cache, so the venv
costs about 30 s here (measured: ``python -m venv`` plus the core install, 29.5 s).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Never copied into the build: outputs, environments, caches, the git folder.
NOT_SOURCE = (
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "node_modules",
    "out",
    ".wolfie",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
)
INSTALL_TIMEOUT_S = 900


def build_wheel(out: Path) -> Path:
    """``python -m pip wheel --no-deps .`` over a clean copy of the source tree."""
    source = out / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip wheel failed: {done.stderr[-3000:]}")
    (wheel,) = out.glob("wolfie-*.whl")
    return wheel


@dataclass(frozen=True)
class WheelVenv:
    """A venv holding the installed wheel; ``home`` is an empty folder to run from."""

    prefix: Path
    home: Path

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"

    @property
    def python(self) -> str:
        return str(self.bin / "python")

    @property
    def wolfie(self) -> str:
        return str(self.bin / "wolfie")

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a user's shell: no PYTHONPATH, no Wolfie settings, the
        venv first on PATH, Prefect's home and telemetry kept inside ``home``."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("WOLFIE_", "PYTHON", "VIRTUAL_ENV", "PREFECT_"))
        }
        env.update(
            PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            DO_NOT_TRACK="1",
            PREFECT_HOME=str(self.home / ".prefect"),
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            HF_HUB_OFFLINE="1",
            NO_COLOR="1",
            COLUMNS="200",
            **extra,
        )
        return env

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 300, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """``args`` (``wolfie ...`` or ``python ...`` from the venv) run in ``home``."""
        command = [str(self.bin / args[0]), *args[1:]]
        return subprocess.run(
            command,
            cwd=self.home,
            env=self.env(**env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def install(wheel: Path, prefix: Path, extras: str = "") -> WheelVenv:
    """A fresh venv at ``prefix`` with ``wheel[extras]`` and its dependencies."""
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True, timeout=300)
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    done = subprocess.run(
        [
            str(prefix / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            target,
        ],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install {target} failed: {done.stderr[-3000:]}")
    home = prefix.parent / f"{prefix.name}-home"
    home.mkdir()
    return WheelVenv(prefix, home)
