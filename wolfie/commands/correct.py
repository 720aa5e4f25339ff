"""``wolfie revise | history``: correct a memory in place, and list its versions.

Thin wrappers over :mod:`wolfie.corrections`, the code path the MCP server shares. Text
from the Pack prints literally (Rich ``Text``), never as markup.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import TEXT_HELP, JsonArg, PackArg, RootArg, read_texts
from wolfie.commands.render import clip

console = Console()

IdArg = Annotated[str, typer.Argument(help="The memory id (m_...) that remember or recall gave.")]
ScopeArg = Annotated[
    str | None,
    typer.Option(help="Only a memory of this scope (user or session); default: any memory."),
]
CHANGE_CHARS = 60  # characters of an old or new value in the history table


def register(app: typer.Typer) -> None:
    app.command(name="revise", short_help="Correct a memory in place (same id).")(revise)
    app.command(name="history", short_help="List a memory's versions: created, merged, revised.")(
        history
    )


def revise(
    memory_id: IdArg,
    pack: PackArg,
    root: RootArg = None,
    intent: Annotated[
        str | None, typer.Option(help=f"The new intent, re-embedded ({TEXT_HELP}).")
    ] = None,
    response: Annotated[
        str | None,
        typer.Option(help=f"The new response, re-embedded; restarts the utility ({TEXT_HELP})."),
    ] = None,
    outcome: Annotated[str | None, typer.Option(help=f"The new outcome ({TEXT_HELP}).")] = None,
    polarity: Annotated[
        str | None,
        typer.Option(help="success, failure, or none to clear it (restarts the utility)."),
    ] = None,
    metadata: Annotated[
        str | None, typer.Option(help="A JSON object that replaces the metadata.")
    ] = None,
    scope: ScopeArg = None,
    source: Annotated[str, typer.Option(help="Provenance recorded with the version.")] = "cli",
    as_json: JsonArg = False,
) -> None:
    """Change the given fields of MEMORY_ID in place; the rest stay. A new response or
    polarity is a new action: its utility restarts from the prior (docs/rewards.md)."""
    from packs.pack import Pack
    from wolfie import front_door

    texts = read_texts(intent=intent, response=response, outcome=outcome)
    meta = front_door.parse_metadata(metadata)
    with Pack.open(pack, root, create=False) as handle:
        result = front_door.revise(
            handle,
            memory_id,
            intent=texts["intent"],
            response=texts["response"],
            outcome=texts["outcome"],
            polarity=polarity,
            metadata=meta,
            source=source,
            scope=scope,
            any_scope=scope is None,
        )
    if as_json:
        _print_json(result.to_dict())
        return
    if result.version is None:
        console.print(Text(f"Unchanged: memory {memory_id} already holds these values."))
        return
    version = result.version
    fields = ", ".join(version.changes)
    console.print(Text(f"Revised memory {memory_id} (version {version.version}): {fields}."))
    if version.utility_reset and version.utility_before is not None:
        console.print(
            Text(f"New action: utility {version.utility_before:+.3f} restarted from the prior.")
        )


def history(
    memory_id: IdArg,
    pack: PackArg,
    root: RootArg = None,
    scope: ScopeArg = None,
    as_json: JsonArg = False,
) -> None:
    """List MEMORY_ID's versions, oldest first: when, what changed (old -> new) and from
    which call (remember, merge, revise)."""
    from packs.pack import Pack
    from wolfie import front_door

    with Pack.open(pack, root, read_only=True) as handle:
        found = front_door.history(handle, memory_id, scope=scope, any_scope=scope is None)
    if as_json:
        _print_json(found.to_dict())
        return
    table = Table(title=Text(f"History of {memory_id}"), title_justify="left")
    for column in ("#", "at", "event", "source", "changes"):
        table.add_column(column, justify="right" if column == "#" else "left")
    for version in found.versions:
        lines = [
            f"{field}: {_cell(c.old)} -> {_cell(c.new)}" for field, c in version.changes.items()
        ]
        if version.absorbed:
            lines.append(f"absorbed: {_cell(version.absorbed.get('intent'))}")
        if version.utility_reset and version.utility_before is not None:
            lines.append(f"utility {version.utility_before:+.3f} -> prior")
        if version.reason:
            lines.append(f"reason: {clip(version.reason, CHANGE_CHARS * 2)}")
        table.add_row(
            str(version.version),
            f"{version.at:%Y-%m-%d %H:%M:%S}",
            version.event,
            Text(version.source or ""),
            Text("\n".join(lines)),
        )
    console.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clip(text, CHANGE_CHARS)


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, allow_nan=False) + "\n")
