"""``wolfie recall | search``: rank a Pack's items for a query, as an agent's first step.

Thin wrappers over :mod:`wolfie.front_door` (the code path the MCP server and the REST
API share). ``recall --log`` records an episode to reward; ``search`` never logs.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from wolfie.commands.options import (
    TEXT_HELP,
    JsonArg,
    KArg,
    PackArg,
    RootArg,
    ScopeArg,
    read_texts,
)
from wolfie.commands.render import explain_text, ranking_table, text_panel

if TYPE_CHECKING:  # the engine loads only inside a command (wolfie --help stays fast)
    from packs.records import Recall

console = Console()

QueryArg = Annotated[str, typer.Argument(help=f"The question, in the user's words ({TEXT_HELP}).")]
WhereArg = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="Keep only items matching a JSON object of columns or metadata keys, e.g. "
        '\'{"kind": "knowledge", "symbol": ["NVDA", "AMD"]}\'.',
    ),
]
ExplainArg = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="Say why each item ranked there: Phase A's similarity, BM25 and relevance "
        "with their ranks, the blend's terms, the past questions behind its utility.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command(
        name="recall", short_help="Rank a Pack's items for a query and print the prompt block."
    )(recall)
    app.command(name="search", short_help="Rank a Pack's items for a query, logging nothing.")(
        search
    )


def recall(
    query: QueryArg,
    pack: PackArg,
    root: RootArg = None,
    k: KArg = None,
    scope: ScopeArg = None,
    filters: WhereArg = None,
    log: Annotated[
        bool,
        typer.Option(help="Log an episode and print its id, to reward with `wolfie feedback`."),
    ] = False,
    explain: ExplainArg = False,
    as_json: JsonArg = False,
) -> None:
    """Rank a Pack's items for QUERY and print the prompt block. Nothing is logged unless
    --log is given."""
    _rank(query, pack, root, k, scope, filters, log=log, explain=explain, as_json=as_json)


def search(
    query: QueryArg,
    pack: PackArg,
    root: RootArg = None,
    k: KArg = None,
    scope: ScopeArg = None,
    filters: WhereArg = None,
    explain: ExplainArg = False,
    as_json: JsonArg = False,
) -> None:
    """Rank a Pack's items for QUERY by what they have learned, without logging or
    exploring: the same order every call (works on a read-only Pack)."""
    _rank(query, pack, root, k, scope, filters, log=False, explain=explain, as_json=as_json)


def _rank(
    query: str,
    pack: str,
    root: str | None,
    k: int | None,
    scope: str | None,
    filters: str | None,
    *,
    log: bool,
    explain: bool,
    as_json: bool,
) -> None:
    from packs.pack import Pack
    from wolfie import front_door

    text = read_texts(query=query)["query"] or ""
    flat = front_door.parse_metadata(filters, "--filter")
    with Pack.open(pack, root, read_only=not log, create=False) as handle:
        result = front_door.recall(
            handle, text, k, filters=flat, scope=scope, log=log, explain=explain
        )
    _show(result, as_json)


def _show(result: Recall, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), allow_nan=False) + "\n")
        return
    console.print(ranking_table(result.query, result.items))
    for place, item in enumerate(result.items, 1):
        if item.explain is not None:
            console.print(explain_text(place, item.id, item.explain))
    console.print(text_panel(result.prompt, "Prompt block"))
    if result.episode_id:
        console.print(Text(f"Episode {result.episode_id} (reward it with `wolfie feedback`)."))
