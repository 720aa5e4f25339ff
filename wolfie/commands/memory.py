"""``wolfie remember | feedback | signal | outcome | forget | packs``: an agent's loop from
the shell.

Thin wrappers over :mod:`wolfie.front_door`, the code path the MCP server shares. Every
command prints a short human summary, or the result's JSON with ``--json``. Text from
the Pack prints literally (Rich ``Text``), never as markup.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wolfie.commands.options import (
    TEXT_HELP,
    JsonArg,
    KeyArg,
    PackArg,
    RootArg,
    ScopeArg,
    read_texts,
)
from wolfie.commands.render import clip
from wolfie.reward_verbs import REQUIRED, VERBS, Arg, Verb, signed

if TYPE_CHECKING:  # the engine loads only inside a command (wolfie --help stays fast)
    from packs.records import FeedbackResult, RememberResult

console = Console()
EpisodeArg = Annotated[
    str, typer.Argument(help="The episode id that `wolfie recall --log` printed.")
]


def register(app: typer.Typer) -> None:
    app.command(name="remember", short_help="Store an interaction as a memory.")(remember)
    for verb in VERBS:
        app.command(name=verb.name, short_help=verb.short_help)(reward_command(verb))
    app.command(
        name="forget", short_help="Forget memories, a user's scope, or what a filter matches."
    )(forget)
    app.command(name="packs", short_help="List the Packs under a root.")(packs)
    memory = typer.Typer(no_args_is_help=True, help="Memories on probation (admission control).")
    memory.command(name="held", short_help="List the memories waiting on probation.")(held)
    app.add_typer(memory, name="memory", short_help="Memories on probation.")


def remember(
    intent: Annotated[str, typer.Argument(help=f"What was asked or the situation ({TEXT_HELP}).")],
    response: Annotated[str, typer.Argument(help=f"What was done or answered ({TEXT_HELP}).")],
    pack: PackArg,
    root: RootArg = None,
    outcome: Annotated[str | None, typer.Option(help=f"How it turned out ({TEXT_HELP}).")] = None,
    polarity: Annotated[
        str | None, typer.Option(help="success or failure (a failure is shown as a WARNING).")
    ] = None,
    metadata: Annotated[
        str | None, typer.Option(help='A JSON object, e.g. \'{"symbol": "NVDA"}\'.')
    ] = None,
    source: Annotated[str, typer.Option(help="Provenance recorded with the memory.")] = "cli",
    confidence: Annotated[
        float | None,
        typer.Option(help="How sure you are, 0 to 1 (admission control may hold it)."),
    ] = None,
    episode: Annotated[
        str | None,
        typer.Option(help="The episode it comes from: its positive reward confirms a hold."),
    ] = None,
    supersedes: Annotated[
        str | None, typer.Option(help="The id of a memory this corrects: it supersedes it.")
    ] = None,
    scope: ScopeArg = None,
    as_json: JsonArg = False,
) -> None:
    """Store INTENT and RESPONSE as a memory (created if the Pack is new); a near-duplicate
    intent (in the same scope) is merged into the memory it repeats, or supersedes it when
    the response, polarity or outcome says something else (a correction). With the Pack's
    admission policy on it may be held on probation or refused, with the reason. A text
    too long for the shell comes from standard input (-) or a file (@FILE)."""
    from packs.pack import Pack
    from wolfie import front_door

    texts = read_texts(intent=intent, response=response, outcome=outcome)
    meta = front_door.parse_metadata(metadata)
    with Pack.open(pack, root) as handle:
        result = front_door.remember(
            handle,
            texts["intent"] or "",
            texts["response"] or "",
            outcome=texts["outcome"],
            polarity=polarity,
            metadata=meta,
            source=source,
            scope=scope,
            confidence=confidence,
            episode_id=episode,
            supersedes=supersedes,
        )
    if as_json:
        _print_json(result.to_dict())
        return
    console.print(remember_line(result))


def remember_line(result: RememberResult) -> Text:
    """What ``remember`` did, in one line (a correction names what it superseded)."""
    if result.id is None:  # refused by admission control
        return Text(f"Refused: nothing stored ({result.reason}).")
    if result.status == "held":
        return Text.assemble(
            "Held memory ",
            (result.id, "bold"),
            f" on probation: recalled once a repeat or a reward confirms it ({result.reason}).",
        )
    if result.status == "superseded":
        line = Text.assemble(
            "Created memory ",
            (result.id, "bold"),
            "; it supersedes memory ",
            (str(result.superseded), "bold"),
        )
    else:
        line = Text.assemble(f"{result.status.capitalize()} memory ", (result.id, "bold"))
    if result.similarity is not None and result.status == "merged":
        line.append(f" (intent similarity {result.similarity:.2f})")
    if result.reason:
        line.append(f" ({result.reason})")
    return line


def reward_command(verb: Verb) -> Callable[..., None]:
    """The command of one reward verb (:mod:`wolfie.reward_verbs`): EPISODE_ID, the verb's
    arguments and flags, ``--pack``, ``--root``, ``--key``, ``--json``."""

    def command(
        episode_id: str,
        pack: str,
        root: str | None,
        key: str | None,
        as_json: bool,
        **arguments: Any,
    ) -> None:
        from packs.pack import Pack
        from wolfie import front_door

        reward = verb.reward(arguments)
        with Pack.open(pack, root, create=False) as handle:
            result = front_door.reward(handle, episode_id, reward, idempotency_key=key)
        _print_reward(result, as_json)

    def option(arg: Arg, annotation: Any) -> Any:
        declared = (
            typer.Option(*arg.cli_flags, help=arg.cli_help)
            if arg.cli_flags
            else typer.Argument(help=arg.cli_help)
        )
        return Annotated[annotation, declared]

    parameters = verb.signature(
        option,
        head=[("episode_id", EpisodeArg, REQUIRED)],
        middle=[("pack", PackArg, REQUIRED), ("root", RootArg, None)],
        tail=[("key", KeyArg, None), ("as_json", JsonArg, False)],
    )
    command.__doc__ = verb.help
    return signed(command, verb.name, parameters, None)


def forget(
    pack: PackArg,
    memory_id: Annotated[
        list[str] | None, typer.Argument(help="Ids of memories or chunks to forget.")
    ] = None,
    root: RootArg = None,
    scope: Annotated[
        str | None,
        typer.Option(
            help="Forget every row of this user or session: its memories and the episodes "
            "recalled in it."
        ),
    ] = None,
    where: Annotated[
        str | None,
        typer.Option(help='A JSON filter over memories, e.g. \'{"source": "notes.md"}\'.'),
    ] = None,
    purge: Annotated[
        bool, typer.Option(help="Also remove the older versions and files that hold them.")
    ] = False,
    as_json: JsonArg = False,
) -> None:
    """Forget MEMORY_IDs, or --scope, or what --where matches (exactly one), from every table
    and every process; --purge takes the bytes out of storage now (else maintain-pack does)."""
    from packs.pack import Pack
    from wolfie import front_door

    filters = front_door.parse_metadata(where, "--where")
    with Pack.open(pack, root, create=False) as handle:
        result = front_door.forget(
            handle, memory_id or None, scope=scope, where=filters, purge=purge
        )
    if as_json:
        _print_json(result.to_dict())
        return
    removed = ", ".join(f"{name} {count}" for name, count in result.removed.items() if count)
    count = len(result.memory_ids)
    console.print(
        Text(
            f"Forgot {count} memor{'y' if count == 1 else 'ies'} of Pack {pack} "
            f"(rows removed: {removed or 'none'})."
        )
    )
    later = "Older versions still hold them until --purge or maintain-pack runs."
    if result.purge_at is not None:  # within a minute of the Pack's last purge
        later = (
            "The Pack was purged within the last minute (one purge a minute at most): this "
            "forget's purge is pending, for the next purge from "
            f"{result.purge_at.isoformat(timespec='seconds')} on or maintain-pack."
        )
    console.print(Text("Older versions were purged too." if result.purged else later))


def held(
    pack: PackArg,
    root: RootArg = None,
    scope: Annotated[
        str | None, typer.Option(help="Only what this user or session sees (default: all).")
    ] = None,
    as_json: JsonArg = False,
) -> None:
    """List the memories on probation: stored, not recalled until a repeat or a positive
    reward of their episode confirms them (admission control, docs/admission.md)."""
    from packs.pack import Pack
    from wolfie import front_door

    with Pack.open(pack, root, read_only=True) as handle:
        found = front_door.held(handle, scope=scope, every=scope is None)
    if as_json:
        _print_json(found.to_dict())
        return
    table = Table(title=Text(f"Held in Pack {pack}: {len(found.memories)}"), title_justify="left")
    for column in ("id", "held since", "intent", "response", "why"):
        table.add_column(column)
    for m in found.memories:
        table.add_row(
            Text(m.id),
            f"{m.held_at:%Y-%m-%d %H:%M}",
            Text(clip(m.intent, 60)),
            Text(clip(m.response or "", 60)),
            Text(m.reason or ""),
        )
    console.print(table)


def packs(root: RootArg = None, as_json: JsonArg = False) -> None:
    """List the Packs under ROOT with their row counts."""
    from wolfie import front_door

    listing = front_door.packs(root)
    if as_json:
        _print_json(listing.to_dict())
        return
    table = Table(title="Packs", title_justify="left")
    for column in ("pack", "memories", "knowledge", "episodes", "rewards", "location"):
        table.add_column(column, justify="right" if column not in ("pack", "location") else "left")
    for info in listing.packs:
        table.add_row(
            Text(info.name),
            str(info.memories),
            str(info.knowledge),
            str(info.episodes),
            str(info.reward_events),
            Text(info.uri, overflow="fold"),
        )
    console.print(table)
    console.print(f"{len(listing.packs)} Pack(s)")


def _print_reward(result: FeedbackResult, as_json: bool) -> None:
    if as_json:
        _print_json(result.to_dict())
        return
    if result.duplicate:
        console.print(Text(f"Already applied (same --key): episode {result.episode_id} unchanged."))
        return
    console.print(
        Text(
            f"Reward {result.value:+.2f} ({result.source}) applied to {result.applied} "
            f"memor{'y' if result.applied == 1 else 'ies'} of episode {result.episode_id}."
        )
    )
    for memory_id, track_record in result.track_records.items():
        ranked = result.ranked_utilities.get(memory_id, track_record)
        console.print(
            Text(
                f"  {memory_id}  for this question next time U(m|q) {ranked:+.3f}, "
                f"track record (global Q) {track_record:+.3f}"
            )
        )


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, allow_nan=False) + "\n")
