"""Serve every deployment of ``deployments/prefect.yaml`` from one process.

``prefect.yaml`` is the single source of truth for names, entrypoints and schedules; this
module turns its entries into Prefect ``RunnerDeployment`` objects (with the Pack name and
root filled in) for ``prefect.serve``. That needs a Prefect server (``PREFECT_API_URL``):
schedules do not run on the ephemeral engine.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import yaml

PREFECT_YAML = Path(__file__).resolve().parent / "prefect.yaml"


def load_entries(path: Path = PREFECT_YAML) -> list[dict[str, Any]]:
    """The ``deployments`` list of a prefect.yaml file."""
    with open(path, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    entries = document.get("deployments") or []
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path} has no deployments list.")
    return entries


def import_flow(entrypoint: str) -> Any:
    """``flows/learning.py:pack_health`` -> the flow object."""
    file_part, _, name = entrypoint.partition(":")
    module = importlib.import_module(file_part.removesuffix(".py").replace("/", "."))
    return getattr(module, name)


def runner_deployments(pack: str, root: str | None, path: Path = PREFECT_YAML) -> list[Any]:
    """One RunnerDeployment per entry, scheduled as the file says, for ``pack``/``root``."""
    deployments = []
    for entry in load_entries(path):
        parameters = {**(entry.get("parameters") or {}), "pack": pack, "root": root}
        crons = [s["cron"] for s in entry.get("schedules") or [] if "cron" in s]
        flow = import_flow(entry["entrypoint"])
        deployments.append(
            flow.to_deployment(
                name=entry["name"],
                cron=crons or None,
                parameters=parameters,
                description=entry.get("description"),
                tags=entry.get("tags"),
            )
        )
    return deployments
