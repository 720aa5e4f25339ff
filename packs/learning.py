"""The reward side of the Pack: every reward source, intrinsic reward, replay, maturity.

A mixin of :class:`packs.pack.Pack`, kept apart so that each file reads at once. Every
source lands in :meth:`LearningMixin.apply_reward`, which appends one typed event per
memory (episode, memory, source, signal, magnitude, value, weight, time, idempotency key)
and moves utility and confidence online. Per-Pack wiring (``settings.rewards``) decides
each source's weight; a switched-off source is still recorded, with weight 0.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import pyarrow as pa

from packs import schemas
from packs.errors import InvalidInput, InvalidReward, InvalidSettings, UnknownMemory
from packs.filters import sql_literal
from packs.hooks import get_hook
from packs.intrinsic import intrinsic_reward
from packs.maturity import Maturity, compute_maturity
from packs.records import FeedbackResult
from packs.replay import replay
from packs.retrieval import vector_query
from packs.reward_sources import (
    from_outcome,
    from_signal,
    from_stars,
    run_hook,
    tally_vote,
)
from packs.rewards import RewardStep
from packs.validation import check_text, check_unit_interval

if TYPE_CHECKING:
    from packs.journal import Journal
    from packs.settings import PackSettings
    from packs.storage import PackStore

_NEIGHBOURS = 50  # candidates read per pool when scoring intrinsic reward
DRIFT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class VoteResult:
    winner: str | None  # the normalised majority answer; None on a tie (nobody rewarded)
    counts: dict[str, int]
    rewards: dict[str, FeedbackResult]  # per attempt (episode id)


@dataclass(frozen=True)
class ValidationResult:
    passed: bool | None  # None: the hook raised, hung or returned a non-bool
    flagged: bool  # True unless the output passed: don't ship it unchecked
    error: str | None
    reward: FeedbackResult | None


@dataclass(frozen=True)
class ResolveResult:
    episode_id: str
    intrinsic: float | None  # r_int before weighting; None when the store is too cold
    neighbours: int  # successful neighbours that qualified
    success_reward: FeedbackResult | None
    intrinsic_reward: FeedbackResult | None


@dataclass(frozen=True)
class RebuildReport:
    memories: int
    events: int
    changed: int
    max_utility_drift: float
    max_confidence_drift: float
    drift: pl.DataFrame  # id, utility (online), rebuilt_utility, confidence, rebuilt_confidence


class LearningMixin:
    """Reward sources, intrinsic reward, utility replay and maturity for a Pack."""

    _journal: Journal
    _store: PackStore
    _settings: PackSettings

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        def _embed(self, texts: list[str]) -> np.ndarray: ...
        def flush(self) -> None: ...

    # --- the one write path for rewards --------------------------------------------------

    def apply_reward(
        self,
        episode_id: str,
        value: float,
        *,
        source: str,
        signal: str,
        magnitude: float | None = None,
        weight: float = 1.0,
        idempotency_key: str | None = None,
        memory_ids: list[str] | None = None,
    ) -> FeedbackResult:
        """Append one typed reward event per memory and move their utilities.

        ``value`` is in [-1, 1]. The step is ``alpha * w * (r - Q)`` where ``w`` is
        ``weight`` times the Pack's weight for ``source``. ``memory_ids`` (item-level
        credit) defaults to every memory injected in the episode.
        """
        self._store.require_writable("record a reward")
        value = check_unit_interval(value, "reward value")
        weight = check_unit_interval(weight, "reward weight", 0.0, 1.0)
        if not isinstance(episode_id, str):
            raise InvalidInput(f"episode_id must be a str, got {type(episode_id).__name__}.")
        if idempotency_key is not None:
            check_text(idempotency_key, "idempotency_key", 512)
        key = idempotency_key or uuid.uuid4().hex
        wiring = self._settings.rewards
        with self._journal.lock:
            injected = self._journal.injected_ids(episode_id)
            # Each memory is credited once, however often the caller names it.
            targets = list(dict.fromkeys(injected if memory_ids is None else memory_ids))
            unknown = sorted(set(targets) - set(injected))
            if unknown:
                raise UnknownMemory(
                    f"Memories {unknown} were not injected in episode {episode_id!r}; "
                    "rewards go only to what the episode used."
                )
            if idempotency_key is not None and self._journal.key_seen(key):
                # Durable mode: a redelivery of a call whose commit failed retries it,
                # and raises again rather than report as stored what is only buffered.
                self._journal.maybe_flush()
                return FeedbackResult(episode_id, 0, True, {})
            step = RewardStep(
                value, self._settings.alpha, weight * wiring.weight(source), wiring.confidence_rate
            )
            utilities = self._journal.record_reward(
                episode_id, targets, step, key=key, source=source, signal=signal,
                magnitude=magnitude, keyed=idempotency_key is not None,
            )  # fmt: skip
            self._journal.maybe_flush()
        return FeedbackResult(episode_id, len(utilities), False, utilities)

    # --- reward sources ------------------------------------------------------------------

    def feedback(
        self,
        episode_id: str,
        rating: float | None = None,
        *,
        stars: int | None = None,
        idempotency_key: str | None = None,
    ) -> FeedbackResult:
        """Explicit rating: ``rating`` in [-1, 1], or ``stars`` 1-5 (``(stars-3)/2``).

        Every memory injected in the episode moves by EMA, ``Q <- Q + alpha (r - Q)``.
        With the same ``idempotency_key`` a redelivered reward is applied once.
        """
        if (rating is None) == (stars is None):
            raise InvalidReward("Give exactly one of rating= (in [-1, 1]) or stars= (1-5).")
        if stars is not None:
            value, signal, magnitude = from_stars(stars), "stars", float(stars)
        else:
            value = check_unit_interval(rating, "rating")
            signal, magnitude = "rating", value
        return self.apply_reward(
            episode_id, value, source="explicit", signal=signal, magnitude=magnitude,
            idempotency_key=idempotency_key,
        )  # fmt: skip

    def outcome(
        self, episode_id: str, amount: float, *, idempotency_key: str | None = None
    ) -> FeedbackResult:
        """A measured outcome (e.g. a P&L) as ``tanh(amount / outcome_scale)``."""
        value = from_outcome(amount, self._settings.rewards.outcome_scale)
        return self.apply_reward(
            episode_id, value, source="outcome", signal="measured", magnitude=float(amount),
            idempotency_key=idempotency_key,
        )  # fmt: skip

    def signal(
        self,
        episode_id: str,
        name: str,
        memory_ids: list[str] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> FeedbackResult:
        """An implicit signal (accepted, edited, ignored, acted_on, ...) from the Pack's
        vocabulary, for the whole episode or for the ``memory_ids`` it concerns."""
        value = from_signal(name, self._settings.rewards.vocabulary)
        return self.apply_reward(
            episode_id, value, source="implicit", signal=name, magnitude=value,
            idempotency_key=idempotency_key, memory_ids=memory_ids,
        )  # fmt: skip

    def vote(
        self, attempts: Mapping[str, str], *, idempotency_key: str | None = None
    ) -> VoteResult:
        """Majority vote over attempts ``{episode_id: answer}`` (see ``tally_vote``).

        Memories behind the majority answer get ``+vote_reward``, those behind a minority
        answer ``-vote_reward``. A tie at the top rewards nobody. Every episode is checked
        before any reward is written.
        """
        tally = tally_vote(attempts, self._settings.rewards.vote_reward)
        for episode_id in attempts:
            self._journal.injected_ids(episode_id)  # UnknownEpisode before any write
        key = idempotency_key or uuid.uuid4().hex
        rewards = {
            episode_id: self.apply_reward(
                episode_id, value, source="vote",
                signal="majority" if value > 0 else "minority",
                magnitude=float(tally.counts[_normalised(attempts[episode_id])]),
                idempotency_key=f"{key}:{episode_id}",
            )
            for episode_id, value in tally.values.items()
        }  # fmt: skip
        return VoteResult(tally.winner, tally.counts, rewards)

    def validate(
        self,
        episode_id: str,
        output: str,
        context: Mapping[str, Any] | None = None,
        *,
        hook: Callable[..., Any] | None = None,
        idempotency_key: str | None = None,
    ) -> ValidationResult:
        """Check ``output`` with the Pack's validation hook before it ships.

        A pass rewards the episode's memories ``validation_pass``; a failure rewards
        ``validation_fail`` and flags the output. A hook that raises, hangs past
        ``validation_timeout_s`` or returns a non-bool is recorded in ``validations``
        as an error, flags the output, rewards nothing and never raises here.
        """
        self._store.require_writable("record a validation")
        text = check_text(output, "output", self._settings.max_text_chars)
        wiring = self._settings.rewards
        if hook is None:
            if wiring.validation_hook is None:
                raise InvalidSettings(
                    f"Pack {self.name!r} has no validation hook; register one "
                    "(packs.hooks.register_hook) and set settings.rewards.validation_hook "
                    "to its name, or pass hook=."
                )
            hook = get_hook(wiring.validation_hook)  # the stored name picks, never imports
        self._journal.injected_ids(episode_id)  # UnknownEpisode before anything is written
        verdict = run_hook(hook, text, context or {}, wiring.validation_timeout_s)
        name = wiring.validation_hook or getattr(hook, "__qualname__", repr(hook))
        row = {
            "at": datetime.now(UTC), "episode_id": episode_id, "hook": name, "output": text,
            "passed": verdict.passed, "flagged": verdict.passed is not True,
            "error": verdict.error,
        }  # fmt: skip
        with self._journal.lock:
            self._journal.buffer.add_rows(schemas.VALIDATIONS, [row])
            self._journal.maybe_flush()  # durable mode: stored before this returns
        reward = None
        if verdict.passed is not None:
            value = wiring.validation_pass if verdict.passed else wiring.validation_fail
            reward = self.apply_reward(
                episode_id, value, source="validation",
                signal="pass" if verdict.passed else "fail", idempotency_key=idempotency_key,
            )  # fmt: skip
        return ValidationResult(verdict.passed, verdict.passed is not True, verdict.error, reward)

    # --- intrinsic reward ----------------------------------------------------------------

    def resolve(
        self,
        episode_id: str,
        response: str,
        success: bool | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> ResolveResult:
        """Store the episode's response and score it against the past (intrinsic reward).

        ``success`` (if known) is an explicit reward of +1/-1. The intrinsic reward
        (``packs/intrinsic.py``) uses the stored utilities as of the last flush, is
        blended at ``intrinsic_weight`` and is silent on a cold store.
        """
        self._store.require_writable("resolve an episode")
        text = check_text(response, "response", self._settings.max_text_chars)
        if success is not None and not isinstance(success, bool):
            raise InvalidInput(f"success must be True, False or None, got {success!r}.")
        episode = self._journal.episode(episode_id, ["query_embedding"])
        vector = self._embed([text])[0]
        key = idempotency_key or uuid.uuid4().hex
        with self._journal.lock:
            self._journal.record_outcome(episode_id, text, vector, success)
            self._journal.maybe_flush()  # durable mode: stored before this returns
        success_reward = None
        if success is not None:
            success_reward = self.apply_reward(
                episode_id, 1.0 if success else -1.0, source="explicit", signal="success",
                idempotency_key=f"{key}:success",
            )  # fmt: skip
        wiring = self._settings.rewards
        query = np.asarray(episode["query_embedding"], dtype=np.float32)
        successes = self._response_pool(
            query,
            f"utility >= {wiring.success_threshold!r} "
            "AND (signal_polarity IS NULL OR signal_polarity != 'failure')",
        )
        failures = self._response_pool(
            query,
            f"(utility <= {wiring.failure_threshold!r} OR signal_polarity = 'failure')",
        )
        r_int = intrinsic_reward(vector, successes, failures, wiring.intrinsic_min_neighbours)
        intrinsic = None
        if r_int is not None:
            intrinsic = self.apply_reward(
                episode_id, wiring.intrinsic_weight * r_int, source="intrinsic",
                signal="intrinsic", magnitude=r_int, idempotency_key=f"{key}:intrinsic",
            )  # fmt: skip
        return ResolveResult(episode_id, r_int, len(successes), success_reward, intrinsic)

    def _response_pool(self, query: np.ndarray, condition: str) -> np.ndarray:
        """Response vectors of memories with similar intents that meet ``condition``."""
        hits = (
            vector_query(self._store.table(schemas.MEMORIES), query)
            .where(
                f"kind = {sql_literal(schemas.KIND_MEMORY)} AND response_embedding IS NOT NULL "
                f"AND {condition}",
                prefilter=True,
            )
            .select(["response_embedding", "_distance"])
            .limit(_NEIGHBOURS)
            .to_arrow()
        )
        similarity = 1.0 - hits["_distance"].to_numpy()
        keep = similarity >= self._settings.rewards.intrinsic_neighbour_similarity
        vectors = hits["response_embedding"].to_pylist()
        return np.array([v for v, k in zip(vectors, keep, strict=True) if k], dtype=np.float64)

    # --- replay and maturity -------------------------------------------------------------

    def reward_log(self) -> pl.DataFrame:
        """The whole append-only reward log (flushed first)."""
        self.flush()
        return pl.from_arrow(self._store.table(schemas.REWARD_EVENTS).to_arrow())  # type: ignore[return-value]

    def rebuild_utilities(self, *, write: bool = True) -> RebuildReport:
        """Replay the reward log; with ``write``, store what differs in one commit.

        Memories without events go back to utility 0 and confidence 0 (MemRL's initial
        values). Afterwards the stored utilities equal the replay of the log.
        """
        events = self.reward_log()
        rebuilt = replay(events)
        current = pl.from_arrow(
            self._store.read_columns(
                schemas.MEMORIES, ["id", "utility", "confidence", "reward_count"]
            )
        )
        assert isinstance(current, pl.DataFrame)
        joined = current.join(
            rebuilt.rename(
                {"memory_id": "id", "utility": "rebuilt_utility",
                 "confidence": "rebuilt_confidence", "reward_count": "rebuilt_count"}
            ),
            on="id",
            how="left",
        ).with_columns(
            pl.col("rebuilt_utility").fill_null(0.0),
            pl.col("rebuilt_confidence").fill_null(0.0),
            pl.col("rebuilt_count").fill_null(0),
        )  # fmt: skip
        joined = joined.with_columns(
            utility_drift=(pl.col("utility") - pl.col("rebuilt_utility")).abs(),
            confidence_drift=(pl.col("confidence") - pl.col("rebuilt_confidence")).abs(),
        )
        changed = joined.filter(
            (pl.col("utility_drift") > DRIFT_TOLERANCE)
            | (pl.col("confidence_drift") > DRIFT_TOLERANCE)
            | (pl.col("reward_count") != pl.col("rebuilt_count"))
        )
        if write and changed.height:
            self._store.require_writable("rewrite utilities")
            now = datetime.now(UTC)
            fields = self._store.table(schemas.MEMORIES).schema
            rows = changed.select(
                "id",
                pl.col("rebuilt_utility").alias("utility"),
                pl.col("rebuilt_confidence").alias("confidence"),
                pl.col("rebuilt_count").cast(pl.Int64).alias("reward_count"),
            ).to_arrow()
            rows = rows.append_column(
                fields.field("updated_at"),
                pa.array([now] * rows.num_rows, fields.field("updated_at").type),
            )
            schema = pa.schema([fields.field(n) for n in rows.column_names])
            self._store.merge(schemas.MEMORIES, rows.cast(schema), "id", update=True, insert=False)
            self._journal.forget_learned()
        return RebuildReport(
            memories=joined.height,
            events=events.height,
            changed=changed.height,
            max_utility_drift=float(joined["utility_drift"].max() or 0.0),  # type: ignore[arg-type]
            max_confidence_drift=float(joined["confidence_drift"].max() or 0.0),  # type: ignore[arg-type]
            drift=changed.select(
                "id", "utility", "rebuilt_utility", "confidence", "rebuilt_confidence"
            ),
        )

    def maturity(self, *, record: bool = False) -> Maturity:
        """The five maturity signals and the stage; ``record`` appends a state trace."""
        self.flush()
        read = self._store.read_columns
        frames = {
            "memories": read(schemas.MEMORIES, ["kind", "utility", "reward_count"]),
            "rewards": read(
                schemas.REWARD_EVENTS,
                ["episode_id", "memory_id", "value", "weight", "idempotency_key"],
            ),
            "injected": read(schemas.RETRIEVAL_LOG, ["item_id"], "injected = true"),
        }
        polars_frames = {k: pl.from_arrow(v) for k, v in frames.items()}
        result = compute_maturity(
            datetime.now(UTC),
            self._settings.alpha,
            polars_frames["memories"],  # type: ignore[arg-type]
            self._store.table(schemas.EPISODES).count_rows(),
            polars_frames["rewards"],  # type: ignore[arg-type]
            polars_frames["injected"],  # type: ignore[arg-type]
        )
        if record:
            self._store.append(
                schemas.STATE_TRACES,
                pa.Table.from_pylist([result.to_row()], schema=schemas.STATE_TRACES_SCHEMA),
            )
        return result


def _normalised(answer: str) -> str:
    from packs.reward_sources import _normalise_answer

    return _normalise_answer(answer)
