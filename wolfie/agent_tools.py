"""What an agent does with a Pack: recall, remember, reward, list Packs.

One code path for every front door: the ``wolfie`` CLI commands (``wolfie/commands/
memory.py``) and the MCP server call these functions. They return the engine's own
records (:mod:`packs.records`), which both doors serialise with ``to_dict()``, and every
input check lives once, in the engine: bad input raises a
:class:`~packs.errors.WolfieError` with the fix in its message. What is added here is
only what a door needs beyond the Pack API: one ``recall`` for logged and unlogged
rankings, JSON metadata, and the listing of Packs. No Typer, no Rich, no Prefect here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packs.errors import InvalidInput
from packs.pack import Pack
from packs.records import FeedbackResult, Recall, Record, RememberResult
from packs.store.catalog import PackInfo, list_packs


@dataclass(frozen=True)
class PackListing(Record):
    root: str | None
    packs: tuple[PackInfo, ...]


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
) -> RememberResult:
    """Store what was asked and what was done; a near-duplicate intent (in the same
    ``scope``) is merged."""
    meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
    return pack.remember(
        intent, response, outcome, meta, polarity=polarity, source=source, scope=scope
    )


def feedback(
    pack: Pack, episode_id: str, rating: float, *, idempotency_key: str | None = None
) -> FeedbackResult:
    """Rate a recalled episode: ``rating`` in [-1, 1] moves every memory it injected."""
    return pack.feedback(episode_id, rating, idempotency_key=idempotency_key)


def signal(
    pack: Pack,
    episode_id: str,
    name: str,
    memory_ids: list[str] | None = None,
    *,
    idempotency_key: str | None = None,
) -> FeedbackResult:
    """An implicit signal (``accepted``, ``edited``, ``ignored``, ``acted_on`` or the Pack's
    own vocabulary) for the whole episode or only for ``memory_ids``."""
    return pack.signal(episode_id, name, memory_ids, idempotency_key=idempotency_key)


def recall(
    pack: Pack, query: str, k: int | None = None, *, log: bool = True,
    metadata: Mapping[str, Any] | None = None, where: Mapping[str, Any] | None = None,
    scope: str | None = None,
) -> Recall:  # fmt: skip
    """Rank the Pack's items for ``query`` (in ``scope``, filtered by ``where`` columns
    and ``metadata``). ``log=True`` records an episode to reward later (needs a writable
    Pack); ``log=False`` is a read-only search."""
    rank = pack.recall if log else pack.search
    return rank(query, k, where=where, metadata=metadata, scope=scope)


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
