"""``wolfie tune``: fit a Pack's learning to its own episodes, list the runs, undo one.

A thin wrapper over ``Pack.tuning`` (``packs/tuning/service.py``, docs/tuning.md): the
same runs the ``tune-pack`` deployment and the automatic tune record.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import JsonArg, PackArg, RootArg

if TYPE_CHECKING:  # the CLI's --help imports no engine module
    from packs.records import TuningReport

console = Console()


def register(app: typer.Typer) -> None:
    app.command(name="tune", short_help="Fit the Pack's learning to its episodes; list or undo.")(
        tune
    )


def tune(
    pack: PackArg,
    root: RootArg = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Fit and compare, adopt nothing.")
    ] = False,
    history: Annotated[
        bool, typer.Option("--history", help="List the Pack's tuning runs, newest first.")
    ] = False,
    rollback: Annotated[
        str | None,
        typer.Option("--rollback", metavar="RUN", help="Store again what run RUN replaced."),
    ] = None,
    as_json: JsonArg = False,
) -> None:
    """Fit the Pack's settings to its logged episodes and adopt what questions held out
    from the fit say is better, for every scope (docs/tuning.md); or list the runs
    (--history), or undo one (--rollback RUN)."""
    from packs.errors import InvalidInput
    from packs.pack import Pack
    from packs.records import json_safe
    from wolfie import front_door

    if history + dry_run + (rollback is not None) > 1:
        raise InvalidInput("Give one of --dry-run, --history and --rollback RUN.")
    read_only = history
    with Pack.open(pack, root, read_only=read_only, create=False) as handle:
        if history:
            runs = list(front_door.tuning(handle).runs)
            if as_json:
                print(json.dumps([json_safe(r.to_dict()) for r in runs], indent=2))
                return
            _print_runs(pack, runs)
            return
        if rollback is not None:
            settings = handle.tuning.rollback(rollback)
            if as_json:
                print(json.dumps({"rolled_back": rollback, "settings": settings.to_dict()}))
                return
            console.print(Text(f"Rolled back tuning run {rollback} on Pack {pack}."))
            return
        report = handle.tuning.tune(dry_run=dry_run)
    if as_json:
        print(json.dumps(json_safe(report.to_dict()), indent=2))
        return
    verdict = "adopted" if report.adopted else "kept the settings in force"
    console.print(Text(f"Tuning run {report.id} on Pack {pack}: {verdict}."))
    console.print(Text(report.reason))
    for key, value in report.changes.items():
        console.print(Text(f"  {key}: {report.in_force.get(key)!r} -> {value!r}"))


def _print_runs(pack: str, runs: list[TuningReport]) -> None:
    table = Table(title=Text(f"Tuning runs of Pack {pack}"), title_justify="left")
    for column in ("run", "at", "trigger", "adopted", "changes", "reason"):
        table.add_column(column)
    for run in runs:
        changes = ", ".join(f"{k}={v!r}" for k, v in run.changes.items()) or "-"
        adopted = "dry run" if run.dry_run else ("yes" if run.adopted else "no")
        table.add_row(
            run.id,
            run.at.isoformat(timespec="seconds"),
            run.trigger,
            adopted,
            changes,
            Text(run.reason),
        )
    console.print(table)
