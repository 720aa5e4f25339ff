"""``wolfie query``: filter and aggregate a Pack's tables, read-only."""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import datetime
from typing import Annotated

import polars as pl
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from packs.errors import InvalidFilter

# What `wolfie query TABLE` shows as a table when --columns is not given: the columns a
# reader scans first, narrow enough for 100 terminal columns. CSV and JSON keep them all.
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "memories": ("id", "intent_text", "utility", "confidence", "reward_count"),
    "knowledge": ("id", "title", "intent_text", "utility", "reward_count"),
    "items": ("id", "kind", "intent_text", "utility", "reward_count"),
    "episodes": ("id", "created_at", "query_text", "success"),
    "retrievals": ("episode_id", "item_id", "final_rank", "similarity", "score", "injected"),
    "rewards": ("episode_id", "memory_id", "signal", "value", "q_after"),
    "traces": ("at", "stage", "episode_count", "hit_rate", "coverage", "feedback_density"),
    "validations": ("at", "episode_id", "hook", "passed", "error"),
    "lessons": ("at", "memory_id", "status", "lesson"),
    "evals": ("at", "run_id", "metric", "k", "value", "dataset"),
}
CELL_CHARS = 48  # free text is cut with "..." in table output (CSV and JSON keep it whole)

# column, operator, value: the longest operators first so ">=" wins over ">".
_EXPRESSION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|=|<|>)(.*)$", re.DOTALL)


def parse_where(expressions: list[str]) -> dict[str, object]:
    """``["kind=knowledge", "utility>=0.5"]`` -> filter dict for ``Pack.query``.

    A value that reads as a JSON number, true, false or null is typed; anything else is
    a string, passed as an escaped literal. Several filters on one column are ANDed.
    """
    from packs.store.query import AllOf  # the store loads LanceDB: not for --help

    conditions: dict[str, list[tuple[str, object]]] = {}
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
        conditions.setdefault(column, []).append((op, value))
    where: dict[str, object] = {}
    for column, parts in conditions.items():
        if len(parts) > 1:
            where[column] = AllOf(tuple(parts))
        else:
            op, value = parts[0]
            where[column] = value if op == "=" else (op, value)
    return where


def csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    """List and struct columns (tags, say) as JSON text: CSV cells hold no nested data."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(
            name,
            [None if v is None else json.dumps(v, default=str) for v in frame[name].to_list()],
            dtype=pl.String,
        )
        for name in nested
    )


def default_columns(table: str, frame: pl.DataFrame) -> list[str]:
    """The table view's columns for ``table``: its defaults that exist, else all."""
    wanted = [c for c in DEFAULT_COLUMNS.get(table, ()) if c in frame.columns]
    return wanted or frame.columns


def cell(value: object) -> Text:
    """One value as literal text (stored text is never read as Rich markup)."""
    if value is None:
        return Text("")
    if isinstance(value, float):
        return Text(f"{value:.4g}")
    if isinstance(value, datetime):
        return Text(value.isoformat(sep=" ", timespec="seconds"))
    if isinstance(value, list | dict):
        value = json.dumps(value, default=str)
    text = str(value)
    return Text(text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 3] + "...")


def print_frame(frame: pl.DataFrame, output: str, console: Console, hidden: int = 0) -> None:
    if output == "csv":
        sys.stdout.write(csv_ready(frame).write_csv())
    elif output == "json":
        sys.stdout.write(frame.write_json() + "\n")
    else:
        table = Table(show_lines=False)
        for column in frame.columns:
            # A header is never narrower than its name (no letters stacked vertically);
            # ids fold rather than lose characters, text is clipped by cell().
            table.add_column(column, min_width=len(column), overflow="fold")
        for row in frame.iter_rows():
            table.add_row(*[cell(v) for v in row])
        console.print(table)
        more = f"; {hidden} more column(s): --columns NAME,... or -f csv" if hidden else ""
        console.print(f"{frame.height} row(s){more}")


def register(app: typer.Typer) -> None:
    @app.command()
    def query(
        table: Annotated[
            str,
            typer.Argument(
                help="memories, knowledge, items, episodes, "
                "retrievals, rewards, traces, lessons, evals"
            ),
        ],
        pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")] = "demo",
        root: Annotated[str | None, typer.Option("--root", help="Pack root (WOLFIE_ROOT).")] = None,
        where: Annotated[
            list[str] | None,
            typer.Option(
                "--where",
                "-w",
                help="COLUMN=VALUE or COLUMN>=VALUE (also != < <= >); repeat to AND.",
            ),
        ] = None,
        columns: Annotated[str | None, typer.Option(help="Comma-separated columns.")] = None,
        group_by: Annotated[str | None, typer.Option(help="Comma-separated columns.")] = None,
        agg: Annotated[
            list[str] | None,
            typer.Option(help="count, or mean|sum|min|max|n_unique:COLUMN; repeatable."),
        ] = None,
        limit: Annotated[int | None, typer.Option(min=1)] = None,
        version: Annotated[int | None, typer.Option(min=1, help="Read a past version.")] = None,
        output: Annotated[str, typer.Option("--format", "-f", help="table|csv|json")] = "table",
    ) -> None:
        """Filter and aggregate a Pack's table without being able to write to it."""
        from packs.pack import Pack
        from packs.store.query import aggregate

        if output not in ("table", "csv", "json"):
            raise typer.BadParameter("--format must be table, csv or json.")
        console = Console(stderr=output != "table")
        selected = [c.strip() for c in columns.split(",")] if columns else None
        with Pack.open(pack, root, read_only=True) as handle:
            frame = handle.query(table, parse_where(where or []), selected, limit, version)
        hidden = 0
        if group_by or agg:
            groups = [c.strip() for c in group_by.split(",")] if group_by else []
            frame = aggregate(frame, groups, agg or ["count"])
        elif output == "table" and not selected:
            shown = default_columns(table, frame)
            hidden = len(frame.columns) - len(shown)
            frame = frame.select(shown)
        print_frame(frame, output, console, hidden)
