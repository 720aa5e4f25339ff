"""``wolfie export | import``: a whole Pack to a Parquet directory or a JSONL file, and
back, between a folder and S3 (the engine: ``packs/transfer/``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import JsonArg, PackArg, RootArg

if TYPE_CHECKING:  # the engine loads LanceDB: only inside a command (wolfie --help stays fast)
    from packs.transfer.service import TransferReport

console = Console()

FileArg = Annotated[
    str, typer.Argument(help="A new directory (Parquet files) or a file ending in .jsonl.")
]


def register(app: typer.Typer) -> None:
    app.command(name="export", short_help="Write a Pack to Parquet files or a JSONL file.")(export)
    app.command(name="import", short_help="Read an exported Pack into a Pack.")(import_)


def export(file: FileArg, pack: PackArg, root: RootArg = None, as_json: JsonArg = False) -> None:
    """Write every table of the Pack (rows, embeddings, learned state, the reward log,
    every settings version) to FILE: a new directory of Parquet files, or a .jsonl file."""
    from packs.pack import Pack

    with Pack.open(pack, root, read_only=True) as handle:
        report = handle.transfer.export(file)
    _show(report, as_json, f"Exported Pack {report.pack} to {report.path} ({report.format})")


def import_(
    file: Annotated[str, typer.Argument(help="What `wolfie export` wrote.")],
    pack: PackArg,
    root: RootArg = None,
    merge: Annotated[
        bool,
        typer.Option(help="Add the file's new rows to a Pack that holds rows (keeps its own)."),
    ] = False,
    scope: Annotated[
        str | None,
        typer.Option(help="Make every memory and episode of the file this user's or session's."),
    ] = None,
    keep_scopes: Annotated[
        bool,
        typer.Option(help="Keep the file's scopes (restoring a whole Pack you exported)."),
    ] = False,
    as_json: JsonArg = False,
) -> None:
    """Read FILE into the Pack (created if missing; one that holds rows needs --merge). The
    whole file is checked before anything is written; a file from another embedding space
    is refused, and so is a scoped row unless --scope or --keep-scopes says whose it is.
    Utilities are rebuilt from the log."""
    from packs.pack_io import import_pack

    report = import_pack(file, pack, root, merge=merge, scope=scope, keep_scopes=keep_scopes)
    merged = " (merged)" if report.merged else ""
    _show(report, as_json, f"Imported {report.path} into Pack {report.pack}{merged}")


def _show(report: TransferReport, as_json: bool, title: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), allow_nan=False) + "\n")
        return
    console.print(Text(title + "."))
    table = Table()
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, rows in report.tables.items():
        table.add_row(name, str(rows))
    console.print(table)
    if report.rebuilt:
        console.print(Text(f"{report.rebuilt} utilities rebuilt from the reward log."))
    for name in report.skipped:
        console.print(Text(f"Kept the Pack's own {name} (settings) in the merge."))
