"""Serve every deployment of ``deployments/prefect.yaml`` from one process.

``prefect.yaml`` is the single source of truth for names, entrypoints and schedules; this
module turns its entries into Prefect ``RunnerDeployment`` objects (with the Pack name and
root filled in) for ``prefect.serve``. That needs a Prefect server (``PREFECT_API_URL``):
schedules do not run on the ephemeral engine.

Entrypoints are loaded exactly as Prefect's runner and workers load them: as a *script*
(``load_flow_from_entrypoint`` on the file path), with the script's folder first on the
import path, in a fresh interpreter (:func:`check_entrypoints`). Importing a dotted module
name, or loading in a process that already imported the package, would hide a module
that shadows a package (``flows/evals.py`` once hid the ``evals`` package from every flow
in ``flows/``, and every scheduled run Crashed).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
PREFECT_YAML = Path(__file__).resolve().parent / "prefect.yaml"


class EntrypointError(RuntimeError):
    """An entrypoint of prefect.yaml does not load the way the runner loads it."""


@dataclass(frozen=True)
class EntrypointFailure:
    deployment: str
    entrypoint: str
    error: str


def load_entries(path: Path | None = None) -> list[dict[str, Any]]:
    """The ``deployments`` list of a prefect.yaml file (default: this folder's)."""
    path = path or PREFECT_YAML
    with open(path, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    entries = document.get("deployments") or []
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path} has no deployments list.")
    return entries


def entrypoint_path(entrypoint: str, base: Path | None = None) -> str:
    """``flows/learning.py:pack_health`` relative to ``base`` (default: the repository,
    the runner's working directory); absolute when this process runs from elsewhere."""
    base = (base or REPO).resolve()
    if Path.cwd().resolve() == base:
        return entrypoint
    return str(base / entrypoint)


def load_flow(entrypoint: str) -> Any:
    """The flow at ``entrypoint``, loaded as a script the way the runner loads it.

    No placeholder: Prefect would otherwise swap a flow whose script fails to import for
    an AST stub, and the failure would only show when a run crashes.
    """
    from prefect.exceptions import MissingFlowError, ScriptError
    from prefect.flows import load_flow_from_entrypoint

    try:
        return load_flow_from_entrypoint(entrypoint, use_placeholder_flow=False)
    except (ScriptError, MissingFlowError, FileNotFoundError) as exc:
        cause = exc.user_exc if isinstance(exc, ScriptError) else exc
        raise EntrypointError(f"{entrypoint}: {type(cause).__name__}: {cause}") from exc


# What the runner's flow-run process does first, in a fresh interpreter: load the script.
# One interpreter per script file: the entrypoints of one file share its imports, and
# loading another file first could mask a shadowed package. Failures: "entrypoint<TAB>why".
_LOADER = """
import sys
from prefect.flows import load_flow_from_entrypoint
for entrypoint in sys.argv[1:]:
    try:
        load_flow_from_entrypoint(entrypoint, use_placeholder_flow=False)
    except Exception as exc:
        cause = getattr(exc, "user_exc", None) or exc
        why = " ".join(f"{type(cause).__name__}: {cause}".split())
        print(f"{entrypoint}\t{why}")
"""


def check_entrypoints(
    path: Path | None = None, base: Path | None = None, timeout_s: float = 300
) -> list[EntrypointFailure]:
    """Every entrypoint that fails to load as the runner loads it (empty: all load).

    Each script file loads in its own fresh interpreter, working in ``base`` (default:
    the repository), as a flow-run process does: in this process a package imported
    earlier would hide a module that shadows it.
    """
    base = (base or REPO).resolve()
    entries = load_entries(path)
    by_file: dict[str, list[str]] = {}
    for entry in entries:
        by_file.setdefault(entry["entrypoint"].rpartition(":")[0], []).append(entry["entrypoint"])
    processes = {script: _spawn_loader(points, base) for script, points in by_file.items()}
    errors: dict[str, str] = {}
    for script, process in processes.items():
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            stdout, stderr = "", f"did not load within {timeout_s:.0f} s"
        for line in stdout.splitlines():
            entrypoint, _, why = line.partition("\t")
            errors[entrypoint] = why
        if process.returncode != 0:  # the interpreter itself failed
            last = (stderr.strip().splitlines() or [f"exit status {process.returncode}"])[-1]
            errors.update({point: last for point in by_file[script] if point not in errors})
    return [
        EntrypointFailure(
            e["name"], e["entrypoint"], f"{e['entrypoint']}: {errors[e['entrypoint']]}"
        )
        for e in entries
        if e["entrypoint"] in errors
    ]


def _spawn_loader(entrypoints: list[str], base: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _LOADER, *entrypoints],
        cwd=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def runner_deployments(
    pack: str, root: str | None, path: Path | None = None, base: Path | None = None
) -> list[Any]:
    """One RunnerDeployment per entry, scheduled as the file says, for ``pack``/``root``.

    Raises :class:`EntrypointError` naming the first entrypoint that does not load."""
    from prefect.deployments.runner import RunnerDeployment

    deployments = []
    for entry in load_entries(path):
        parameters = {**(entry.get("parameters") or {}), "pack": pack, "root": root}
        crons = [s["cron"] for s in entry.get("schedules") or [] if "cron" in s]
        entrypoint = entrypoint_path(entry["entrypoint"], base)
        load_flow(entrypoint)  # fails loudly; from_entrypoint would fall back to a stub
        deployments.append(
            RunnerDeployment.from_entrypoint(
                entrypoint,
                name=entry["name"],
                cron=crons or None,
                parameters=parameters,
                description=entry.get("description"),
                tags=entry.get("tags"),
            )
        )
    return deployments
