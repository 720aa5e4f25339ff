"""``wolfie serve``: run every deployment on its schedule against a Prefect server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")] = "demo",
        root: Annotated[str | None, typer.Option("--root", help="Pack root (WOLFIE_ROOT).")] = None,
        check: Annotated[
            bool,
            typer.Option(
                help="Load every entrypoint as Prefect's runner does, print the "
                "deployments and exit (2 if one fails to load)."
            ),
        ] = False,
        prefect_file: Annotated[
            Path | None,
            typer.Option(
                help="Deployments file; its entrypoints are relative to the working "
                "directory, as for `prefect deploy` (default: deployments/prefect.yaml)."
            ),
        ] = None,
    ) -> None:
        """Serve every deployment in deployments/prefect.yaml (needs PREFECT_API_URL)."""
        from deployments.serve import EntrypointError, check_entrypoints, runner_deployments

        console = Console()
        root = root or os.environ.get("WOLFIE_ROOT")
        base = Path.cwd() if prefect_file else None
        failures = check_entrypoints(prefect_file, base)
        for failure in failures:
            console.print(
                f"[red]{escape(failure.deployment)}[/red] does not load as Prefect's runner "
                f"loads it: {escape(failure.error)}",
                soft_wrap=True,
            )
        if failures:
            console.print(
                f"{len(failures)} deployment(s) would crash on every run. Fix the import "
                "(no module in an entrypoint folder may share a name with a package).",
                soft_wrap=True,
            )
            raise SystemExit(2)
        try:
            deployments = runner_deployments(pack, root, prefect_file, base)
        except EntrypointError as exc:
            console.print(f"[red]Cannot load a deployment:[/red] {escape(str(exc))}")
            raise SystemExit(2) from exc
        for deployment in deployments:
            when = ", ".join(s.schedule.cron for s in deployment.schedules) or "on demand"
            console.print(
                f"{deployment.name:<22} {deployment.entrypoint:<45} {when}", soft_wrap=True
            )
        if check:
            return
        if not os.environ.get("PREFECT_API_URL"):
            console.print(
                "[red]Schedules need a Prefect server.[/red] Start one with "
                "`prefect server start` and set PREFECT_API_URL=http://127.0.0.1:4200/api."
            )
            raise SystemExit(2)
        from prefect import serve as prefect_serve

        prefect_serve(*deployments)
