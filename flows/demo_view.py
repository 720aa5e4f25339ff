"""What ``wolfie demo`` prints: the ranking before and after learning, and how it moved.

Kept apart from ``flows/cli.py`` so the command module stays a list of commands. Every
piece of Pack text is printed as Rich ``Text`` (literal, never markup).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from flows.commands.render import ranking_table, text_panel


def print_demo(console: Console, pack: str, root: str | None, epochs: int, fresh: bool) -> None:
    from flows.demo import demo_flow
    from packs.pack import Pack

    if fresh:
        with console.status("Preparing a fresh Pack"):
            Pack.open(pack, root).store.drop_all()
    console.print(Panel.fit(Text.assemble("Wolfie demo: Pack ", (pack, "bold"),
                                          " (Prefect engine, embedded)")))  # fmt: skip
    with console.status("Starting Prefect and loading the demo bundle"):
        result = demo_flow(pack=pack, root=root, epochs=epochs, show_progress=True)
    loaded = result["loaded"]
    console.print(
        f"Loaded {loaded['knowledge']} knowledge chunks and {loaded['memories']} memories "
        f"({loaded['merged']} merged as near-duplicates)."
    )
    before, after = result["before"], result["after"]
    console.print(ranking_table(f"Before learning: {before['query']!r}", before["items"]))
    console.print(text_panel(before["prompt"], "Prompt block injected before learning"))
    rates = Table(title="Rewarded episodes (+1 if a helpful item was injected, else -1)")
    rates.add_column("epoch", justify="right")
    rates.add_column("success rate", justify="right")
    for epoch, rate in result["success_by_epoch"].items():
        rates.add_row(str(epoch), f"{rate:.0%}")
    console.print(rates)
    console.print(ranking_table("After learning", after["items"]))
    console.print(text_panel(after["prompt"], "Prompt block injected after learning"))
    if result["spoken"]:
        console.print(spoken_panel(result["spoken"]))


def spoken_panel(spoken: dict[str, Any]) -> Panel:
    item, top = spoken["ingest"], spoken["items"][0]
    lines = [
        f"Ingested {item['media']!r}: {item['duration_s']:.1f} s of speech, {item['chunks']} "
        f"chunks ({item['status']}, {item['wall_s']:.1f} s of work).",
        f"Recall {spoken['query']!r}",
        f"-> [{top['start_s']:.1f}-{top['end_s']:.1f} s] {top['text']}",
    ]
    return text_panel("\n".join(lines), "Voice note: transcribed, chunked, recalled")
