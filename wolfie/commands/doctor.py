"""``wolfie doctor``: check a Pack's storage and say what was found (packs/doctor.py).

Exit status 0 when every check passes, 1 when one does not; an unusable name or root is
an error (2), as for every command.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import PackArg, RootArg

console = Console()


def register(app: typer.Typer) -> None:
    app.command(name="doctor", short_help="Check a Pack's tables, versions and learned state.")(
        doctor
    )


def doctor(
    pack: PackArg,
    root: RootArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Check a Pack without writing to it: its settings (pack_meta), every table (opens,
    rows, versions, a lost latest commit, unreadable data files) and its learned state
    against the reward log. Exit status 1 when something is wrong."""
    from packs.doctor import diagnose

    report = diagnose(pack, root)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict()) + "\n")
    else:
        table = Table(title=Text(f"Pack {pack!r} under {report.root}"), title_justify="left")
        for column in ("check", "status", "found"):
            table.add_column(column, overflow="fold")
        for finding in report.findings:
            status = Text("ok", "green") if finding.ok else Text("PROBLEM", "red")
            table.add_row(Text(finding.check), status, Text(finding.detail))
        console.print(table)
        problems = sum(not f.ok for f in report.findings)
        console.print(Text("Healthy." if report.healthy else f"{problems} problem(s) found."))
    if not report.healthy:
        raise typer.Exit(1)
