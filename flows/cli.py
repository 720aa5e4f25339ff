"""The ``wolfie`` command line."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from flows.commands import register_all
from flows.runtime import configure_offline
from packs.errors import WolfieError

configure_offline()

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Wolfie: self-evolving memory.")
console = Console()

PackOpt = Annotated[str, typer.Option("--pack", "-p", help="Pack name.")]
RootOpt = Annotated[
    str | None,
    typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
]


def _ranking_table(title: str, items: list[dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("#", "kind", "text", "sim", "utility", "bonus", "score"):
        table.add_column(column, justify="right" if column not in ("kind", "text") else "left")
    for rank, item in enumerate(items, start=1):
        text = item["text"] if len(item["text"]) <= 70 else item["text"][:67] + "..."
        if item["warning"]:
            text = f"[red]WARNING[/red] {text}"
        table.add_row(
            str(rank), item["kind"], text, f"{item['similarity']:.2f}",
            f"{item['utility']:+.2f}", f"{item['exploration_bonus']:.2f}", f"{item['score']:+.2f}",
        )  # fmt: skip
    return table


@app.command()
def demo(
    pack: PackOpt = "demo",
    root: RootOpt = None,
    epochs: Annotated[int, typer.Option(min=1, max=50, help="Passes over the episodes.")] = 3,
    fresh: Annotated[bool, typer.Option(help="Start from an empty Pack.")] = True,
) -> None:
    """Build a Pack from data/demo, recall, learn from rewarded episodes, show the change."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")  # keep the output readable
    from flows.demo import demo_flow
    from packs.pack import Pack

    if fresh:
        with console.status("Preparing a fresh Pack"):
            Pack.open(pack, root).store.drop_all()
    console.print(Panel.fit(f"Wolfie demo: Pack [bold]{pack}[/bold] (Prefect engine, embedded)"))
    with console.status("Starting Prefect and loading the demo bundle"):
        result = demo_flow(pack=pack, root=root, epochs=epochs, show_progress=True)
    loaded = result["loaded"]
    console.print(
        f"Loaded {loaded['knowledge']} knowledge chunks and {loaded['memories']} memories "
        f"({loaded['merged']} merged as near-duplicates)."
    )
    before, after = result["before"], result["after"]
    console.print(_ranking_table(f"Before learning: {before['query']!r}", before["items"]))
    console.print(Panel(before["prompt"], title="Prompt block injected before learning"))
    rates = Table(title="Rewarded episodes (+1 if a helpful item was injected, else -1)")
    rates.add_column("epoch", justify="right")
    rates.add_column("success rate", justify="right")
    for epoch, rate in result["success_by_epoch"].items():
        rates.add_row(str(epoch), f"{rate:.0%}")
    console.print(rates)
    console.print(_ranking_table("After learning", after["items"]))
    console.print(Panel(after["prompt"], title="Prompt block injected after learning"))
    if result["spoken"]:
        console.print(_spoken_panel(result["spoken"]))


def _spoken_panel(spoken: dict[str, Any]) -> Panel:
    item, top = spoken["ingest"], spoken["items"][0]
    lines = [
        f"Ingested {item['media']!r}: {item['duration_s']:.1f} s of speech, {item['chunks']} "
        f"chunks ({item['status']}, {item['wall_s']:.1f} s of work).",
        f"Recall {spoken['query']!r}",
        f"-> [{top['start_s']:.1f}-{top['end_s']:.1f} s] {top['text']}",
    ]
    return Panel("\n".join(lines), title="Voice note: transcribed, chunked, recalled")


@app.command()
def recall(
    query: str,
    pack: PackOpt = "demo",
    root: RootOpt = None,
    k: Annotated[int | None, typer.Option(help="Items to keep (k2).")] = None,
) -> None:
    """Rank a Pack's items for QUERY and print the prompt block (nothing is logged)."""
    from dataclasses import asdict

    from packs.pack import Pack

    with Pack.open(pack, root, read_only=True) as handle:
        result = handle.search(query, k)
    console.print(_ranking_table(query, [asdict(i) for i in result.items]))
    console.print(Panel(result.prompt, title="Prompt block"))


register_all(app)


def main() -> None:
    """The console entry point: Wolfie's errors print as one clear line, exit status 2."""
    try:
        app(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(1)
    except WolfieError as exc:
        Console(stderr=True).print(f"[red]Error:[/red] {exc}", highlight=False, markup=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
