"""What both framework retrievers share: the Pack they rank, the text and metadata of a
ranked item, and the episode a result came from (no framework imported here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from packs.errors import InvalidInput
from packs.pack import Pack
from packs.records import FeedbackResult, Recall, RecalledItem
from wolfie import front_door

EPISODE_KEY = "episode_id"  # the metadata key of the episode a result came from


class PackRanker:
    """A Pack (an open handle, or a name opened on first use) and how to rank it."""

    def __init__(
        self,
        pack: Pack | str,
        root: str | None,
        k: int | None,
        scope: str | None,
        filters: Mapping[str, Any] | None,
        log: bool,
    ) -> None:
        if not isinstance(pack, Pack | str):
            raise InvalidInput(f"pack must be a Pack or a Pack name, got {type(pack).__name__}.")
        self._pack, self._root = pack, root
        self.k, self.scope, self.filters, self.log = k, scope, filters, log

    @property
    def pack(self) -> Pack:
        if isinstance(self._pack, str):
            self._pack = Pack.open(self._pack, self._root, read_only=not self.log)
        return self._pack

    def rank(self, query: str, k: int | None = None) -> Recall:
        """``recall`` (an episode to reward) or, with ``log=False``, ``search``; the
        call's ``k`` wins over the built one."""
        k = self.k if k is None else k
        found = front_door.recall(
            self.pack, query, k, filters=self.filters, scope=self.scope, log=self.log
        )
        if self.log:
            self.pack.flush(wait=False)  # the episode reaches other processes soon
        return found

    def feedback(
        self, episode: str, rating: float, idempotency_key: str | None = None
    ) -> FeedbackResult:
        """Reward ``episode``, which a scoped retriever's scope must have recalled (as
        every pinned door's rewards are bound: ``EpisodeLog.check_scope``)."""
        result = self.pack.feedback(
            episode, rating, idempotency_key=idempotency_key, scope=self.scope
        )
        self.pack.flush()
        return result


def item_text(item: RecalledItem) -> str:
    """What a framework puts in the prompt: the item's text, then the response it records."""
    return f"{item.text}\n\n{item.response}" if item.response else item.text


def item_metadata(item: RecalledItem, episode_id: str | None) -> dict[str, Any]:
    """The item's id, kind, score, track record and episode, and where it comes from."""
    keys = (
        "id",
        "kind",
        "score",
        "similarity",
        "ranked_utility",
        "track_record",
        "confidence",
        "lesson",
        "polarity",
        "warning",
        "source",
        "title",
        "start_s",
        "end_s",
    )
    meta = {key: getattr(item, key) for key in keys}
    meta[EPISODE_KEY] = episode_id
    return {key: value for key, value in meta.items() if value is not None}


def episode_of(results: str | Iterable[Any], metadata: Any) -> str:
    """The one episode ``results`` came from (their metadata's ``episode_id``), or the
    episode id itself."""
    if isinstance(results, str):
        return results
    episodes = {metadata(result).get(EPISODE_KEY) for result in results}
    if len(episodes) != 1 or None in episodes:
        raise InvalidInput(
            f"Give the results of one logged recall (their metadata's {EPISODE_KEY!r}), or "
            f"an episode id; these came from {sorted(map(str, episodes))}."
        )
    return str(episodes.pop())
