"""``wolfie serve``: run every deployment on its schedule against a Prefect server."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")] = "demo",
        root: Annotated[str | None, typer.Option("--root", help="Pack root (WOLFIE_ROOT).")] = None,
        check: Annotated[bool, typer.Option(help="Build the deployments, print, exit.")] = False,
    ) -> None:
        """Serve every deployment in deployments/prefect.yaml (needs PREFECT_API_URL)."""
        from deployments.serve import runner_deployments

        console = Console()
        root = root or os.environ.get("WOLFIE_ROOT")
        deployments = runner_deployments(pack, root)
        for deployment in deployments:
            when = ", ".join(s.schedule.cron for s in deployment.schedules) or "on demand"
            console.print(f"{deployment.name:<22} {deployment.entrypoint:<45} {when}")
        if check:
            return
        if not os.environ.get("PREFECT_API_URL"):
            console.print(
                "[red]Schedules need a Prefect server.[/red] Start one with "
                "`prefect server start` and set PREFECT_API_URL=http://127.0.0.1:4200/api."
            )
            raise typer.Exit(2)
        from prefect import serve as prefect_serve

        prefect_serve(*deployments)
