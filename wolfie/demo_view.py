"""What ``wolfie demo`` prints: the ranking before and after learning, and how it moved.

Kept apart from ``wolfie/cli.py`` so the command module stays a list of commands. Every
piece of Pack text is printed as Rich ``Text`` (literal, never markup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from wolfie.commands.render import clip, ranking_table, text_panel

if TYPE_CHECKING:
    from flows.demo import SpokenRecall
    from packs.ranking_snapshot import RankingSnapshot
    from packs.records import RecalledItem


def print_demo(console: Console, pack: str, root: str | None, epochs: int, fresh: bool) -> None:
    from flows.demo import DEMO_MEDIA, demo_flow
    from packs.extras import installed
    from packs.pack import Pack

    # The voice note needs the media extra (faster-whisper); the rest only needs batch.
    media = str(DEMO_MEDIA) if installed("media") else None

    if fresh:
        with console.status("Preparing a fresh Pack"):
            Pack.open(pack, root).upkeep.drop_all()
    console.print(
        Panel.fit(
            Text.assemble("Wolfie demo: Pack ", (pack, "bold"), " (Prefect engine, embedded)")
        )
    )
    with console.status("Starting Prefect and loading the demo bundle"):
        result = demo_flow(pack=pack, root=root, epochs=epochs, show_progress=True, media=media)
    loaded = result.loaded
    console.print(
        f"Loaded {loaded.knowledge} knowledge chunks and {loaded.memories} memories "
        f"({loaded.merged} merged as near-duplicates)."
    )
    before, after, helpful = result.before, result.after, set(result.helpful)
    helps = ["yes" if i.id in helpful else "no" for i in before.items]
    before_items = list(before.items)
    console.print(
        ranking_table(f"Before learning: {before.query!r}", before_items, helps, "helps?")
    )
    console.print(text_panel(before.prompt, "Prompt block injected before learning"))
    console.print(
        "Rewarded episodes: an episode succeeds when a helpful item was injected. The "
        "helpful items are acted on (+1), the others ignored (-0.3); a failed episode is "
        "rated -1."
    )
    rates = Table()
    rates.add_column("epoch", justify="right")
    rates.add_column("success rate", justify="right")
    for epoch, rate in result.success_by_epoch.items():
        rates.add_row(str(epoch), f"{rate:.0%}")
    console.print(rates)
    moved = [
        f"{'yes' if item.id in helpful else 'no'}, {move}"
        for item, move in zip(after.items, result.moves, strict=True)
    ]
    after_items = list(after.items)
    console.print(
        ranking_table(f"After learning: {after.query!r}", after_items, moved, "helps? before")
    )
    console.print(_change_line(before, after, helpful))
    console.print(text_panel(after.prompt, "Prompt block injected after learning"))
    if result.spoken:
        console.print(spoken_panel(result.spoken))
    elif media is None:
        console.print(
            Text(
                "Skipped the voice note: transcribing it needs the 'media' extra "
                "(pip install 'wolfie[media]')."
            )
        )


def _change_line(before: RankingSnapshot, after: RankingSnapshot, helpful: set[str]) -> Text:
    def name(item: RecalledItem) -> str:
        verdict = "helps" if item.id in helpful else "does not help"
        return f"{clip(item.text, 60)!r} ({verdict})"

    first, now = before.items[0], after.items[0]
    if first.id == now.id:
        return Text(f"The top item stayed {name(now)}.")
    return Text.assemble(("Top item: ", "bold"), name(first), " -> ", name(now))


def spoken_panel(spoken: SpokenRecall) -> Panel:
    item, top = spoken.ingest, spoken.recall.items[0]
    lines = [
        f"Ingested {item['media']!r}: {item['duration_s']:.1f} s of speech, {item['chunks']} "
        f"chunks ({item['status']}, {item['wall_s']:.1f} s of work).",
        f"Recall {spoken.recall.query!r}",
        f"-> [{top.start_s:.1f}-{top.end_s:.1f} s] {top.text}",
    ]
    return text_panel("\n".join(lines), "Voice note: transcribed, chunked, recalled")
