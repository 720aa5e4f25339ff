"""``wolfie eval`` and ``wolfie eval-runs``.

- ``eval`` runs the eval flow: an eval set against a Pack pinned to one version, results
  stored in the Pack's ``eval_runs`` table and published as Prefect artifacts.
- ``eval-runs`` prints the stored results of past runs (the trend over time).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

console = Console()

PackOpt = Annotated[str, typer.Option("--pack", "-p", help="Pack name.")]
RootOpt = Annotated[
    str | None,
    typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
]


def register(app: typer.Typer) -> None:
    app.command(name="eval")(eval_command)
    app.command(name="eval-runs")(eval_runs_command)


def eval_command(
    pack: PackOpt = "manpages",
    root: RootOpt = None,
    eval_set: Annotated[
        Path | None, typer.Option(help="JSONL eval set (default: the committed man pages).")
    ] = None,
    load: Annotated[
        Path | None, typer.Option(help="Add this bundle folder to the Pack first.")
    ] = None,
    k: Annotated[list[int] | None, typer.Option("--k", help="Cutoffs (repeat).")] = None,
    version: Annotated[
        int | None, typer.Option(help="memories table version (default: the latest).")
    ] = None,
    ragas: Annotated[bool, typer.Option(help="Also ragas' non-LLM context metrics.")] = True,
) -> None:
    """Score an eval set against a Pack; store the results in its eval_runs table."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    from flows.evals import DEFAULT_EVAL_SET, eval_flow

    with console.status("Scoring the eval set (Prefect engine, embedded)"):
        result = eval_flow(
            pack=pack, root=root, eval_set=str(eval_set or DEFAULT_EVAL_SET),
            ks=tuple(k or (1, 3, 5, 10)), version=version,
            load=str(load) if load else None, ragas=ragas,
        )  # fmt: skip
    table = Table(
        title=f"Pack {pack!r} v{result['pack_version']} × {result['dataset']} "
        f"({result['queries']} queries), run {result['run_id'][:8]}",
        title_justify="left",
    )
    for column in ("metric", "k", "value", "queries"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for r in result["results"]:
        k_text = "" if r["k"] is None else str(r["k"])
        table.add_row(r["metric"], k_text, f"{r['value']:.3f}", str(r["queries"]))
    console.print(table)
    console.print(f"Missed queries (nothing relevant retrieved): {len(result['misses'])}")


def eval_runs_command(
    pack: PackOpt = "manpages",
    root: RootOpt = None,
    metric: Annotated[str, typer.Option(help="Metric to follow.")] = "recall",
    k: Annotated[int | None, typer.Option(help="Its cutoff (none for k-less metrics).")] = 3,
) -> None:
    """Print one metric over the Pack's stored eval runs, oldest first."""
    from evals.eval_runs import read_eval_runs, trend
    from packs.pack import Pack

    with Pack.open(pack, root, read_only=True) as handle:
        rows = trend(read_eval_runs(handle), metric, k)
    table = Table(title=f"{metric}@{k} over eval runs of Pack {pack!r}", title_justify="left")
    for column in ("at", "run", "dataset", "pack version", "value"):
        table.add_column(column)
    for row in rows.iter_rows(named=True):
        table.add_row(
            str(row["at"])[:19], row["run_id"][:8], row["dataset"],
            str(row["pack_version"]), f"{row['value']:.3f}",
        )  # fmt: skip
    console.print(table if rows.height else f"No {metric}@{k} results stored in {pack!r} yet.")
