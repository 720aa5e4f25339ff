"""``wolfie get | maturity | supersede | maintain``: look at one memory or the whole Pack,
retire a memory, and run the nightly upkeep by hand.

Thin wrappers over the front door (:mod:`wolfie.front_door`) and the engine's upkeep
(``pack.upkeep.maintain``, what the ``maintain-pack`` flow runs: no Prefect needed).
Text from the Pack prints literally (Rich ``Text``), never as markup.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import JsonArg, PackArg, RootArg

console = Console()

IdArg = Annotated[str, typer.Argument(help="The memory id (m_...) that remember or recall gave.")]
ONLY_SCOPE = "Only a memory of this scope (user or session); default: any memory."


def register(app: typer.Typer) -> None:
    app.command(name="get", short_help="Show one memory as stored, with its track record.")(get)
    app.command(name="maturity", short_help="The Pack's five maturity signals and its stage.")(
        maturity
    )
    app.command(name="supersede", short_help="Mark a memory no longer true (kept as history).")(
        supersede
    )
    app.command(
        name="maintain", short_help="Run the nightly upkeep now: expiry, purge, compaction."
    )(maintain)


def get(
    memory_id: IdArg,
    pack: PackArg,
    root: RootArg = None,
    scope: Annotated[str | None, typer.Option(help=ONLY_SCOPE)] = None,
    as_json: JsonArg = False,
) -> None:
    """Show MEMORY_ID as stored: its text, lesson, track record (global Q), uses,
    metadata, provenance, and whether it expired or was superseded."""
    from packs.pack import Pack
    from wolfie import front_door

    with Pack.open(pack, root, read_only=True) as handle:
        found = front_door.get(handle, memory_id, scope=scope, any_scope=scope is None)
    record = found.to_dict()
    if as_json:
        _print_json(record)
        return
    table = Table(title=Text(f"Memory {memory_id}"), title_justify="left", show_header=False)
    table.add_column("field")
    table.add_column("value")
    for name, value in record.items():
        if value not in (None, {}, []):
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            table.add_row(name, Text(shown))
    console.print(table)


def maturity(
    pack: PackArg,
    root: RootArg = None,
    as_json: JsonArg = False,
) -> None:
    """The Pack's maturity signals (episodes, utility convergence against the EMA noise
    floor, hit rate, coverage, feedback density) and its stage: cold, warming, warm."""
    from packs.pack import Pack
    from packs.records import json_safe

    with Pack.open(pack, root, read_only=True) as handle:
        signals: dict[str, Any] = json_safe(handle.maturity())
    if as_json:
        _print_json(signals)
        return
    table = Table(title=Text(f"Pack {pack}: {signals['stage']}"), title_justify="left")
    table.add_column("signal")
    table.add_column("value", justify="right")
    for name, value in signals.items():
        if name not in ("stage", "at"):
            table.add_row(name, "-" if value is None else f"{value:.4g}")
    console.print(table)


def supersede(
    memory_id: IdArg,
    pack: PackArg,
    root: RootArg = None,
    by: Annotated[str | None, typer.Option(help="The memory that replaces it.")] = None,
    reason: Annotated[str | None, typer.Option(help="Why it is no longer true.")] = None,
    scope: Annotated[str | None, typer.Option(help=ONLY_SCOPE)] = None,
    as_json: JsonArg = False,
) -> None:
    """Mark MEMORY_ID no longer true: never recalled or searched again, kept as history
    (`wolfie get` shows the mark). Marking it again replaces the mark."""
    from packs.pack import Pack
    from wolfie import front_door

    with Pack.open(pack, root, create=False) as handle:
        done = front_door.supersede(
            handle, memory_id, by=by, reason=reason, scope=scope, any_scope=scope is None
        )
    if as_json:
        _print_json(done.to_dict())
        return
    replaced = f" by {by}" if by else ""
    console.print(Text(f"Superseded memory {memory_id}{replaced}: history now, never advice."))


def maintain(
    pack: PackArg,
    root: RootArg = None,
    as_json: JsonArg = False,
) -> None:
    """What the nightly maintain-pack flow does, now: forget expired memories, purge what
    forgets left in older versions, compact every table, drop old versions, build the
    indexes that are due."""
    from packs.pack import Pack
    from packs.records import json_safe

    with Pack.open(pack, root, create=False) as handle:
        report: dict[str, Any] = json_safe(handle.upkeep.maintain())
    if as_json:
        _print_json(report)
        return
    after = sum(report["fragments_after"].values())
    before = sum(report["fragments_before"].values())
    removed = sum(report["versions_removed"].values())
    console.print(
        Text(
            f"Maintained Pack {pack}: {report['expired']} expired memories forgotten, "
            f"{report['purged']} forgets purged, fragments {before} -> {after}, "
            f"{removed} old versions removed, indexes built: "
            f"{', '.join(report['indexes_built']) or 'none'}."
        )
    )


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, allow_nan=False) + "\n")
