"""``wolfie query``: filter and aggregate a Pack's tables, read-only."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Annotated

import polars as pl
import typer
from rich.console import Console
from rich.table import Table

from packs.errors import InvalidFilter

# column, operator, value: the longest operators first so ">=" wins over ">".
_EXPRESSION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|=|<|>)(.*)$", re.DOTALL)


def parse_where(expressions: list[str]) -> dict[str, object]:
    """``["kind=knowledge", "utility>=0.5"]`` -> filter dict for ``Pack.query``.

    A value that reads as a JSON number, true, false or null is typed; anything else is
    a string, passed as an escaped literal.
    """
    where: dict[str, object] = {}
    for text in expressions:
        match = _EXPRESSION.match(text)
        if not match:
            raise InvalidFilter(f"Can't read filter {text!r}; write COLUMN=VALUE or COLUMN>=VALUE.")
        column, op, raw = match.groups()
        value: object = raw
        try:
            parsed = json.loads(raw)
            finite = not isinstance(parsed, float) or math.isfinite(parsed)
            if parsed is None or (isinstance(parsed, bool | int | float) and finite):
                value = parsed
        except ValueError:
            pass
        where[column] = value if op == "=" else (op, value)
    return where


def csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    """List and struct columns (tags, say) as JSON text: CSV cells hold no nested data."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [None if v is None else json.dumps(v, default=str)
                         for v in frame[name].to_list()], dtype=pl.String)
        for name in nested
    )  # fmt: skip


def print_frame(frame: pl.DataFrame, output: str, console: Console) -> None:
    if output == "csv":
        sys.stdout.write(csv_ready(frame).write_csv())
    elif output == "json":
        sys.stdout.write(frame.write_json() + "\n")
    else:
        table = Table(show_lines=False)
        for column in frame.columns:
            table.add_column(column, overflow="fold")
        for row in frame.iter_rows():
            table.add_row(*["" if v is None else str(v) for v in row])
        console.print(table)
        console.print(f"{frame.height} row(s)")


def register(app: typer.Typer) -> None:
    @app.command()
    def query(
        table: Annotated[str, typer.Argument(help="memories, knowledge, items, episodes, "
                                             "retrievals, rewards, traces, lessons, evals")],
        pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")] = "demo",
        root: Annotated[str | None, typer.Option("--root", help="Pack root (WOLFIE_ROOT).")] = None,
        where: Annotated[list[str] | None, typer.Option("--where", "-w", help="COLUMN=VALUE "
                         "or COLUMN>=VALUE (also != < <= >); repeat to AND.")] = None,
        columns: Annotated[str | None, typer.Option(help="Comma-separated columns.")] = None,
        group_by: Annotated[str | None, typer.Option(help="Comma-separated columns.")] = None,
        agg: Annotated[list[str] | None, typer.Option(help="count, or mean|sum|min|max|"
                       "n_unique:COLUMN; repeatable.")] = None,
        limit: Annotated[int | None, typer.Option(min=1)] = None,
        version: Annotated[int | None, typer.Option(min=1, help="Read a past version.")] = None,
        output: Annotated[str, typer.Option("--format", "-f", help="table|csv|json")] = "table",
    ) -> None:  # fmt: skip
        """Filter and aggregate a Pack's table without being able to write to it."""
        from packs.pack import Pack
        from packs.query import aggregate

        if output not in ("table", "csv", "json"):
            raise typer.BadParameter("--format must be table, csv or json.")
        console = Console(stderr=output != "table")
        selected = [c.strip() for c in columns.split(",")] if columns else None
        with Pack.open(pack, root, read_only=True) as handle:
            frame = handle.query(table, parse_where(where or []), selected, limit, version)
        if group_by or agg:
            groups = [c.strip() for c in group_by.split(",")] if group_by else []
            frame = aggregate(frame, groups, agg or ["count"])
        print_frame(frame, output, console)
