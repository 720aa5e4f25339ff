"""The memories an operator looks at first: the highest and lowest utility, with lessons.

Only rows with at least one reward take part: a utility of 0 that nothing ever rewarded
says nothing. Pure reads of the ``memories`` table (``Pack.query``); no Prefect here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packs.pack import Pack

_COLUMNS = [
    "id",
    "kind",
    "intent_text",
    "utility",
    "confidence",
    "reward_count",
    "usage_count",
    "experience_summary",
]


@dataclass(frozen=True)
class UtilityExtremes:
    top: list[dict[str, Any]]  # best first
    bottom: list[dict[str, Any]]  # worst first
    rewarded: int  # rows with at least one reward


def utility_extremes(pack: Pack, n: int = 5) -> UtilityExtremes:
    """The ``n`` rewarded rows of highest utility and the ``n`` of lowest (disjoint: with
    fewer than ``2n`` rewarded rows, the bottom list holds what the top list left)."""
    rows = pack.query("items", {"reward_count": (">", 0)}, _COLUMNS).to_dicts()  # flushed first
    rows.sort(key=lambda r: (-r["utility"], -r["confidence"], r["id"]))
    top = rows[:n]
    bottom = list(reversed(rows[len(top) :]))[:n]
    return UtilityExtremes(top, bottom, len(rows))
