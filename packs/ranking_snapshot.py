"""A ranking taken without logging anything: what a recall would inject right now."""

from __future__ import annotations

from dataclasses import dataclass, field

from packs.pack import Pack
from packs.recall.prompt import render_prompt
from packs.records import RecalledItem


@dataclass(frozen=True)
class RankingSnapshot:
    query: str
    items: tuple[RecalledItem, ...]  # the top k
    prompt: str  # the prompt block of those items
    positions: dict[str, int] = field(default_factory=dict)  # id -> rank in the top depth


def snapshot_ranking(pack: Pack, query: str, k: int, depth: int = 10) -> RankingSnapshot:
    """The top ``k`` for ``query`` with nothing logged, its prompt block, and the rank
    of every item in the top ``depth`` (to show later how items moved)."""
    result = pack.search(query, max(k, depth))
    top = tuple(result.items[:k])
    positions = {item.id: rank for rank, item in enumerate(result.items, start=1)}
    return RankingSnapshot(query, top, render_prompt(list(top)), positions)


def ranking_moves(before: RankingSnapshot, after: RankingSnapshot) -> list[str]:
    """Where each item in ``after``'s top was ranked in ``before``: "was #5", "same",
    or "new" when it was not in the top ``depth``."""
    moves = []
    for rank, item in enumerate(after.items, start=1):
        was = before.positions.get(item.id)
        moves.append("new" if was is None else "same" if was == rank else f"was #{was}")
    return moves


def snapshot_media(pack: Pack, query: str, media_id: str, k: int = 1) -> RankingSnapshot:
    """The best ``k`` chunks of one media item for ``query`` (ranked as recall, nothing
    logged)."""
    from packs.ingest import media_source

    result = pack.search(query, k, where={"source": media_source(media_id)})
    return RankingSnapshot(query, tuple(result.items), result.prompt)
