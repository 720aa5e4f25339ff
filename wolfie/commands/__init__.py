"""Sub-commands of ``wolfie``, one module each, registered on the main Typer app.

Each module defines ``register(app)``. Add a module here to add its commands.
"""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES: tuple[str, ...] = (
    "ingest",
    "serve",
    "evals",
    "query",
    "memory",
    "correct",
    "transfer",
    "mcp",
    "doctor",
    "lessons",
    "ranking",
    "upkeep",
    "api",
    "tune",
)


def register_all(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"wolfie.commands.{name}").register(app)
