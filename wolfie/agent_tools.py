"""What an agent does with a Pack: recall, remember, reward, list Packs.

One code path for every front door: the ``wolfie`` CLI commands (``wolfie/commands/
memory.py``) and the MCP server call these functions, so both validate the same way
and return the same shapes. Each function takes an open :class:`~packs.pack.Pack` (or a
root, for :func:`packs`) and plain values, validates what the Pack API does not, calls
it, and returns a small frozen dataclass whose ``to_dict()`` is JSON-safe. Bad input
raises a :class:`~packs.errors.WolfieError` with the fix in its message. No Typer, no
Rich, no Prefect here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from packs.errors import InvalidInput, InvalidReward
from packs.pack import Pack
from packs.records import FeedbackResult, Recall, RecalledItem
from packs.store.catalog import PackInfo, list_packs

POLARITIES = ("success", "failure")


@dataclass(frozen=True)
class Remembered:
    """``status``: created, merged (into the near-duplicate ``id``) or exists."""

    pack: str
    id: str
    status: str
    similarity: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Rewarded:
    """A reward applied to an episode's memories; ``utilities`` are their new values."""

    pack: str
    episode_id: str
    kind: str  # "feedback" or "signal"
    value: float  # the reward in [-1, 1] before the source's weight
    applied: int
    duplicate: bool  # the idempotency key was seen before: nothing changed
    utilities: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RecalledView:
    """One recalled item, JSON-safe: what an agent needs to cite and to reward it."""

    id: str
    kind: str
    text: str
    similarity: float
    ranked_utility: float  # U(m | query): the utility that ranked it for this query
    track_record: float  # the global Q over every reward (the prompt's "Track record")
    exploration_bonus: float
    score: float
    warning: bool
    source: str | None
    title: str | None
    start_s: float | None
    end_s: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Recalled:
    """A ranking. ``episode_id`` is what :func:`feedback` and :func:`signal` reward; it is
    None for a search (nothing logged)."""

    pack: str
    query: str
    episode_id: str | None
    prompt: str
    items: tuple[RecalledView, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack, "query": self.query, "episode_id": self.episode_id,
            "prompt": self.prompt, "items": [item.to_dict() for item in self.items],
        }  # fmt: skip


@dataclass(frozen=True)
class PackListing:
    root: str | None
    packs: tuple[PackInfo, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "packs": [p.to_dict() for p in self.packs]}


def remember(
    pack: Pack,
    intent: str,
    response: str,
    *,
    outcome: str | None = None,
    polarity: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str = "agent",
    scope: str | None = None,
) -> Remembered:
    """Store what was asked and what was done; a near-duplicate intent (in the same
    ``scope``) is merged."""
    if polarity is not None and polarity not in POLARITIES:
        raise InvalidInput(
            f"polarity must be 'success' or 'failure' (or left out), not {polarity!r}."
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInput(
            f"metadata must be an object of key: value, got {type(metadata).__name__}."
        )
    result = pack.remember(
        intent, response, outcome, metadata, polarity=polarity, source=source, scope=scope
    )
    return Remembered(pack.name, result.id, result.status, result.similarity)


def feedback(
    pack: Pack,
    episode_id: str,
    rating: float,
    *,
    idempotency_key: str | None = None,
) -> Rewarded:
    """Rate a recalled episode: ``rating`` in [-1, 1] moves every memory it injected."""
    value = _rating(rating)
    result = pack.feedback(_episode(episode_id), value, idempotency_key=idempotency_key)
    return _rewarded(pack, "feedback", value, result)


def signal(
    pack: Pack,
    episode_id: str,
    name: str,
    memory_ids: Sequence[str] | None = None,
    *,
    idempotency_key: str | None = None,
) -> Rewarded:
    """An implicit signal (``accepted``, ``edited``, ``ignored``, ``acted_on`` or the Pack's
    own vocabulary) for the whole episode or only for ``memory_ids``."""
    vocabulary = pack.settings.rewards.vocabulary
    if not isinstance(name, str) or name not in vocabulary:
        raise InvalidReward(
            f"Unknown signal {name!r}; Pack {pack.name!r} knows {sorted(vocabulary)}."
        )
    ids = _memory_ids(memory_ids)
    result = pack.signal(_episode(episode_id), name, ids, idempotency_key=idempotency_key)
    return _rewarded(pack, "signal", vocabulary[name], result)


def recall(
    pack: Pack, query: str, k: int | None = None, *, log: bool = True,
    metadata: Mapping[str, Any] | None = None, where: Mapping[str, Any] | None = None,
    scope: str | None = None,
) -> Recalled:  # fmt: skip
    """Rank the Pack's items for ``query`` (in ``scope``, filtered by ``where`` columns
    and ``metadata``). ``log=True`` records an episode to reward later (needs a writable
    Pack); ``log=False`` is a read-only search."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100):
        raise InvalidInput(f"k must be an integer from 1 to 100, got {k!r}.")
    rank = pack.recall if log else pack.search
    found = rank(query, k, where=where, metadata=metadata, scope=scope)
    return recalled_view(pack.name, found)


def recalled_view(pack_name: str, found: Recall) -> Recalled:
    """A Pack :class:`~packs.records.Recall` in the JSON-safe shape agents get."""
    return Recalled(
        pack_name, found.query, found.episode_id, found.prompt,
        tuple(item_view(i) for i in found.items),
    )  # fmt: skip


def item_view(item: RecalledItem) -> RecalledView:
    """One item as agents and the CLI see it, with both utilities under their names."""
    return RecalledView(
        id=item.id, kind=item.kind, text=item.text, similarity=item.similarity,
        ranked_utility=item.ranked_utility, track_record=item.utility,
        exploration_bonus=item.exploration_bonus, score=item.score,
        warning=item.warning, source=item.source, title=item.title, start_s=item.start_s,
        end_s=item.end_s,
    )  # fmt: skip


def packs(root: str | None = None) -> PackListing:
    """The Packs under ``root`` (default ``WOLFIE_ROOT`` or ``./.wolfie``) with row counts."""
    return PackListing(root, tuple(list_packs(root)))


def parse_metadata(text: str | None) -> dict[str, Any] | None:
    """``'{"symbol": "NVDA"}'`` -> a dict; the CLI's and the MCP server's JSON input."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"metadata is not valid JSON ({exc.msg}); pass an object like "
                           '\'{"symbol": "NVDA"}\'.') from exc  # fmt: skip
    if not isinstance(value, dict):
        raise InvalidInput(f"metadata must be a JSON object, got {type(value).__name__}.")
    try:  # a "\udce9" escape decodes to a lone surrogate: no table can store it
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput("metadata holds a lone surrogate (a \\u escape of half a pair, "
                           "or invalid UTF-8); pass UTF-8 text.") from exc  # fmt: skip
    return value


def _rating(rating: object) -> float:
    if isinstance(rating, bool) or not isinstance(rating, int | float):
        raise InvalidReward(f"rating must be a number in [-1, 1], got {rating!r}.")
    if not math.isfinite(rating) or not -1.0 <= rating <= 1.0:
        raise InvalidReward(f"rating must be in [-1, 1] (-1 misled, +1 helped), got {rating!r}.")
    return float(rating)


def _episode(episode_id: object) -> str:
    if not isinstance(episode_id, str) or not episode_id.strip():
        raise InvalidInput(
            f"episode_id must be the non-empty id that recall returned, got {episode_id!r}."
        )
    return episode_id.strip()


def _memory_ids(memory_ids: Sequence[str] | None) -> list[str] | None:
    if memory_ids is None:
        return None
    if isinstance(memory_ids, str) or not all(isinstance(m, str) and m for m in memory_ids):
        raise InvalidInput(f"memory_ids must be a list of memory id strings, got {memory_ids!r}.")
    ids = list(dict.fromkeys(memory_ids))  # a repeated id is one memory, rewarded once
    if not ids:
        raise InvalidInput("memory_ids is empty; leave it out to reward the whole episode.")
    return ids


def _rewarded(pack: Pack, kind: str, value: float, result: FeedbackResult) -> Rewarded:
    return Rewarded(
        pack.name, result.episode_id, kind, value, result.applied, result.duplicate,
        dict(result.utilities),
    )  # fmt: skip
