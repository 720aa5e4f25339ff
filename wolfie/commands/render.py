"""Rich renderables shared by ``wolfie`` commands, with Pack text kept literal.

Anything that came from a Pack or a user (item text, titles, prompt blocks) goes into a
Rich ``Text``, so brackets in it are printed, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from packs.records import RecalledItem


TEXT_WIDTH = 70  # characters of item text in a ranking table row


def clip(text: str, width: int = TEXT_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def ranking_table(
    title: str,
    items: Sequence[RecalledItem],
    marks: Sequence[str] | None = None,
    mark_header: str = "",
) -> Table:
    """Ranked items as a table; ``marks`` adds a column (e.g. how each item moved)."""
    table = Table(title=Text(title), title_justify="left")
    # U(m|q): the utility that ranked the item for this query; Q: its global track record
    columns = ("#", "kind", "text", "sim", "U(m|q)", "Q", "bonus", "score")
    for column in columns[:3] + ((mark_header,) if marks else ()) + columns[3:]:
        left = column in ("kind", "text", mark_header)
        table.add_column(column, justify="left" if left else "right")
    for rank, item in enumerate(items, start=1):
        text = Text(clip(item.text))
        if item.warning:
            text = Text.assemble(("WARNING ", "red"), text)
        row: list[str | Text] = [str(rank), item.kind, text]
        if marks:
            row.append(Text(marks[rank - 1], style="bold"))
        row += [
            f"{item.similarity:.2f}",
            f"{item.ranked_utility:+.2f}",
            f"{item.track_record:+.2f}",
            f"{item.exploration_bonus:.2f}",
            f"{item.score:+.2f}",
        ]
        table.add_row(*row)
    return table


def text_panel(body: str, title: str) -> Panel:
    return Panel(Text(body), title=Text(title))


def explain_text(place: int, memory_id: str, explain: dict[str, Any]) -> Text:
    """One item's ``explain`` in a few lines: Phase A, the blend's terms, the evidence."""
    a, b, u = explain["phase_a"], explain["phase_b"], explain["utility"]
    lexical = "-" if a["lexical_rank"] is None else f"{a['lexical']:.2f} (#{a['lexical_rank']})"
    terms = " + ".join(f"{name} {value:+.3f}" for name, value in b["terms"].items() if value)
    lines = [
        f"#{place} {memory_id}",
        f"  Phase A: similarity {a['similarity']:.3f} (#{a['similarity_rank']} of "
        f"{a['pool']}), BM25 {lexical}, relevance {a['relevance']:.3f} "
        f"(#{a['relevance_rank']})",
        f"  Phase B: {terms or '0'} = score {b['score']:.3f}",
        f"  U(m|q) {u['ranked']:.3f} (evidence share {u['evidence_share']:.2f}), "
        f"track record {u['track_record']:.3f} over {u['reward_count']} rewards",
    ]
    for past in u["evidence"]:
        lines.append(
            f"    from {clip(past['question'], 60)!r}: similarity {past['similarity']:.2f}, "
            f"reward {past['reward']:+.2f}, weight {past['weight']:.3f}"
        )
    link = explain["placement"]["link"]
    if link is not None:
        lines.append(
            f"  linked by {clip(str(link['question']), 60)!r} ({link['key_similarity']:.2f})"
        )
    return Text("\n".join(lines))
