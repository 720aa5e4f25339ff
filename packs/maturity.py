"""The five maturity signals of a Pack, from its tables. Pure functions over DataFrames.

Definitions (``docs/rewards.md`` has the table and the reasoning):

- ``episode_count``: episodes logged;
- ``q_variance``: variance of utility across memories with at least one reward, against
  the EMA noise floor ``alpha/(2-alpha) * Var(r)`` as ``q_variance_ratio`` (above 1,
  utilities differ by more than reward noise alone explains);
- ``hit_rate``: share of rewarded (episode, memory) pairs whose mean reward was positive;
- ``coverage``: entropy of injection counts over items, divided by ``log(items)``;
- ``feedback_density``: reward deliveries (distinct (episode, idempotency key) pairs)
  per episode.

Stage (hand-set thresholds, to tune from traces): **cold** below 20 episodes or with no
rewards; **warm** at 200+ episodes with feedback_density >= 0.5 and either
q_variance_ratio >= 1 (utilities have separated beyond noise) or hit_rate >= 0.8 (what is
retrieved is mostly used); **warming** in between.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from packs.lazy import lazy_module
from packs.learning.ema import REVISION_SOURCE
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

COLD_EPISODES = 20
WARM_EPISODES = 200
WARM_FEEDBACK_DENSITY = 0.5
WARM_VARIANCE_RATIO = 1.0
WARM_HIT_RATE = 0.8


@dataclass(frozen=True)
class Maturity:
    at: datetime
    episode_count: int
    memory_count: int
    knowledge_count: int
    reward_count: int
    q_variance: float | None
    q_noise_floor: float | None
    q_variance_ratio: float | None
    hit_rate: float | None
    coverage: float | None
    feedback_density: float | None
    stage: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def _variance(series: pl.Series) -> float | None:
    value = series.var(ddof=0) if series.len() >= 2 else None
    return None if value is None else float(value)  # type: ignore[arg-type]


def compute_maturity(
    at: datetime,
    alpha: float,
    memories: pl.DataFrame,
    episode_count: int,
    rewards: pl.DataFrame,
    injected: pl.DataFrame,
) -> Maturity:
    """``memories``: kind, utility, reward_count; ``rewards``: episode_id, memory_id,
    value, weight, idempotency_key; ``injected``: item_id per injected retrieval."""
    live = rewards.filter(pl.col("weight") > 0) if rewards.height else rewards
    rewarded = memories.filter(pl.col("reward_count") > 0)
    q_variance = _variance(rewarded["utility"]) if rewarded.height else None
    reward_variance = _variance(live["value"]) if live.height else None
    noise = alpha / (2 - alpha) * reward_variance if reward_variance is not None else None
    ratio = q_variance / noise if q_variance is not None and noise else None
    hit_rate = None
    if live.height:
        per_pair = live.group_by(["episode_id", "memory_id"]).agg(pl.col("value").mean())
        hit_rate = float((per_pair["value"] > 0).mean())  # type: ignore[arg-type]
    coverage = None
    if injected.height and memories.height > 1:
        counts = injected.group_by("item_id").len()["len"].cast(pl.Float64)
        p = counts / counts.sum()
        entropy = float(-(p * p.log()).sum())
        coverage = entropy / math.log(memories.height)
    # a delivery is one (episode, key): a key names one reward of one episode
    deliveries = live.select("episode_id", "idempotency_key").n_unique() if live.height else 0
    density = deliveries / episode_count if episode_count else None
    stage = _stage(episode_count, live.height, density, ratio, hit_rate)
    kinds = memories["kind"]
    return Maturity(
        at=at,
        episode_count=episode_count,
        memory_count=int((kinds == "memory").sum()),
        knowledge_count=int((kinds == "knowledge").sum()),
        reward_count=live.height,
        q_variance=q_variance,
        q_noise_floor=noise,
        q_variance_ratio=ratio,
        hit_rate=hit_rate,
        coverage=coverage,
        feedback_density=density,
        stage=stage,
    )


def _stage(
    episodes: int, rewards: int, density: float | None, ratio: float | None, hits: float | None
) -> str:
    if episodes < COLD_EPISODES or rewards == 0:
        return "cold"
    learned = (ratio or 0.0) >= WARM_VARIANCE_RATIO or (hits or 0.0) >= WARM_HIT_RATE
    warm = episodes >= WARM_EPISODES and (density or 0.0) >= WARM_FEEDBACK_DENSITY and learned
    return "warm" if warm else "warming"


def measure_maturity(store: PackStore, alpha: float, *, record: bool) -> Maturity:
    """Read the tables :func:`compute_maturity` needs (the caller flushes first);
    ``record`` appends the result to ``state_traces``."""
    memories = store.scan(schemas.MEMORIES, ["kind", "utility", "reward_count"])
    rewards = store.scan(  # a revision's reset is logged as an event, but is no feedback
        schemas.REWARD_EVENTS,
        ["episode_id", "memory_id", "value", "weight", "idempotency_key"],
        f"source != {sql_literal(REVISION_SOURCE)}",
    )
    injected = store.scan(schemas.RETRIEVAL_LOG, ["item_id"], "injected = true")
    result = compute_maturity(
        datetime.now(UTC),
        alpha,
        pl.DataFrame(memories),
        store.count(schemas.EPISODES),
        pl.DataFrame(rewards),
        pl.DataFrame(injected),
    )
    if record:
        row = pa.Table.from_pylist([result.to_row()], schema=schemas.STATE_TRACES_SCHEMA)
        store.append(schemas.STATE_TRACES, row)
    return result
