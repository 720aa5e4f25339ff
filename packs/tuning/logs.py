"""What the tuner reads: the Pack's recent episodes, their candidate pools and rewards.

One read per table (the episodes, their ``retrieval_log`` rows, their ``reward_events``),
bounded to the newest :data:`MAX_EPISODES` episodes, and turned into plain arrays
(:class:`TuningLog`); nothing here ranks or decides.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from packs.lazy import lazy_module
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.scopes import episode_scope
from packs.tuning.questions import question_ids

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

# Hand-set bound on one fit's cost: the newest 20,000 episodes (about 20 MB of pools and
# 30 MB of query vectors); `wolfie tune` over it stays under a minute (docs/tuning.md).
MAX_EPISODES = 20_000
_REWARD_COLUMNS = [
    "episode_id",
    "memory_id",
    "value",
    "weight",
    "source",
    "magnitude",
    "alpha",
    "confidence_rate",
    "created_at",
    "writer",
    "seq",
]


class Event(NamedTuple):
    """One reward event, as the replay folds it."""

    memory_id: str
    value: float
    alpha: float
    weight: float
    confidence_rate: float
    source: str
    magnitude: float | None


@dataclass(frozen=True)
class Pool:
    """One episode's candidates as Phase A found them."""

    ids: list[str]
    kinds: list[str]
    similarity: NDArray[np.float64]
    lexical: NDArray[np.float64]  # BM25 score, 0 outside its list (and before schema 4)
    injected: list[str]  # in rank order


@dataclass
class TuningLog:
    """Episodes oldest first, each with its question, pool and rewards."""

    episode_ids: list[str]
    query: NDArray[np.float32]  # (episodes, dim)
    question: NDArray[np.int64]  # same-question ids (packs/tuning/questions.py)
    pools: list[Pool]
    rewards: pl.DataFrame  # _REWARD_COLUMNS plus "episode" (index into the episodes)
    vectors: Callable[[list[str]], dict[str, NDArray[np.float32]]] = field(repr=False)
    # the scope each episode was recalled in (None: a shared recall), from its own filter
    scopes: list[str | None] = field(default_factory=list)

    def scope_of(self, question: int) -> str | None:
        """The scope of a question's first episode."""
        if not self.scopes:
            return None
        return self.scopes[int(np.flatnonzero(self.question == question)[0])]

    def __len__(self) -> int:
        return len(self.episode_ids)

    @functools.cached_property
    def events(self) -> dict[int, list[Event]]:
        """Each rewarded episode's reward events, in log order."""
        out: dict[int, list[Event]] = {}
        columns = ["episode", "memory_id", "value", "alpha", "weight", "confidence_rate"]
        for row in self.rewards.select([*columns, "source", "magnitude"]).iter_rows():
            out.setdefault(int(row[0]), []).append(Event(*row[1:]))
        return out

    @property
    def rewarded(self) -> NDArray[np.bool_]:
        """Episodes with at least one reward event."""
        out = np.zeros(len(self), dtype=bool)
        if self.rewards.height:
            out[self.rewards["episode"].unique().to_numpy()] = True
        return out


def read_log(store: PackStore, dim: int, max_episodes: int = MAX_EPISODES) -> TuningLog:
    """The newest ``max_episodes`` episodes of the Pack with their pools and rewards."""
    episodes = pl.DataFrame(
        store.scan(
            schemas.EPISODES,
            ["id", "created_at", "query_embedding", "injected_ids", "filter_json"],
        )
    )
    if episodes.height:
        episodes = episodes.sort(["created_at", "id"]).tail(max_episodes)
    ids = episodes["id"].to_list() if episodes.height else []
    query = np.zeros((0, dim), np.float32)
    if ids:
        query = np.asarray(episodes["query_embedding"].to_list(), dtype=np.float32)
    first = episodes["created_at"].min() if ids else None
    since = first if isinstance(first, datetime) else None
    pools = _pools(store, ids, episodes["injected_ids"].to_list() if ids else [], since)
    rewards = _rewards(store, ids, since)

    known: dict[str, NDArray[np.float32]] = {}

    def vectors(memory_ids: list[str]) -> dict[str, NDArray[np.float32]]:
        """The intent vectors of ``memory_ids`` (read once each; a forgotten one is absent)."""
        missing = [m for m in dict.fromkeys(memory_ids) if m not in known]
        if missing:
            rows = store.scan(
                schemas.MEMORIES, ["id", "intent_embedding"], in_clause("id", missing)
            )
            for m, v in zip(
                rows["id"].to_pylist(), rows["intent_embedding"].to_pylist(), strict=True
            ):
                known[m] = np.asarray(v, dtype=np.float32)
        return {m: known[m] for m in memory_ids if m in known}

    scopes = [episode_scope(f) for f in episodes["filter_json"].to_list()] if ids else []
    return TuningLog(ids, query, question_ids(query), pools, rewards, vectors, scopes)


def _after(since: datetime | None) -> str | None:
    if since is None:
        return None
    return f"created_at >= timestamp {sql_literal(since.strftime('%Y-%m-%d %H:%M:%S.%f'))}"


def _pools(
    store: PackStore, ids: list[str], injected: list[list[str] | None], since: datetime | None
) -> list[Pool]:
    if not ids:
        return []
    columns = ["episode_id", "item_id", "kind", "phase_a_rank", "similarity"]
    has_lexical = "lexical" in store.schema(schemas.RETRIEVAL_LOG).names
    rows = pl.DataFrame(
        store.scan(
            schemas.RETRIEVAL_LOG, [*columns, *(["lexical"] if has_lexical else [])], _after(since)
        )
    )
    if not has_lexical:
        rows = rows.with_columns(pl.lit(None, dtype=pl.Float64).alias("lexical"))
    rows = rows.filter(pl.col("episode_id").is_in(ids)).sort(["episode_id", "phase_a_rank"])
    by_episode = {
        str(key[0]): group for key, group in rows.group_by("episode_id", maintain_order=True)
    }
    out = []
    for episode_id, slate in zip(ids, injected, strict=True):
        group = by_episode.get(episode_id)
        if group is None:
            out.append(Pool([], [], np.zeros(0), np.zeros(0), list(slate or [])))
            continue
        out.append(
            Pool(
                group["item_id"].to_list(),
                group["kind"].to_list(),
                group["similarity"].to_numpy().astype(np.float64),
                group["lexical"].fill_null(0.0).to_numpy().astype(np.float64),
                list(slate or []),
            )
        )
    return out


def _rewards(store: PackStore, ids: list[str], since: datetime | None) -> pl.DataFrame:
    events = pl.DataFrame(store.scan(schemas.REWARD_EVENTS, _REWARD_COLUMNS, _after(since)))
    index = pl.DataFrame(
        {"episode_id": ids, "episode": np.arange(len(ids), dtype=np.int64)},
        schema={"episode_id": pl.String, "episode": pl.Int64},
    )
    if events.height == 0:
        return events.join(index, on="episode_id", how="inner")
    return events.join(index, on="episode_id", how="inner").sort(["created_at", "writer", "seq"])
