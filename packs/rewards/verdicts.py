"""Verdicts on an episode's output: a validation hook's pass or fail, and a resolved
episode's intrinsic reward against the Pack's past (``packs/rewards/intrinsic.py``).
Both reward through :class:`~packs.rewards.service.RewardService`."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from packs.embeddings.pack_embedder import PackEmbedder
from packs.errors import InvalidInput, InvalidSettings
from packs.hooks import get_hook
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.journal.write_buffer import WriteBuffer
from packs.recall.ranking import similarity_from_distance
from packs.records import ResolveResult, ValidationResult
from packs.rewards.intrinsic import intrinsic_reward
from packs.rewards.service import RewardService
from packs.rewards.sources import run_hook
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.validation import check_text


class VerdictService:
    """Validates outputs and resolves episodes, rewarding through ``rewards``."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        embedder: PackEmbedder,
        episodes: EpisodeLog,
        buffer: WriteBuffer,
        rewards: RewardService,
        flusher: Flusher,
        lock: threading.RLock,
    ) -> None:
        self._store = store
        self._settings = settings
        self._embedder = embedder
        self._episodes = episodes
        self._buffer = buffer
        self._rewards = rewards
        self._flusher = flusher
        self._lock = lock

    def validate(
        self,
        episode_id: str,
        output: str,
        context: Mapping[str, Any] | None = None,
        *,
        hook: Callable[..., Any] | None = None,
        idempotency_key: str | None = None,
        scope: str | None = None,
    ) -> ValidationResult:
        """Check ``output`` with the Pack's validation hook before it ships.

        A pass rewards the episode's memories ``validation_pass``; a failure rewards
        ``validation_fail`` and flags the output. A hook that raises, hangs past
        ``validation_timeout_s`` or returns a non-bool is recorded in ``validations``
        as an error, flags the output, rewards nothing and never raises here.
        """
        self._store.require_writable("record a validation")
        text = check_text(output, "output", self._settings.value.max_text_chars)
        wiring = self._settings.value.rewards
        if hook is None:
            if wiring.validation_hook is None:
                raise InvalidSettings(
                    f"Pack {self._store.location.name!r} has no validation hook; register one "
                    "(packs.hooks.register_hook) and set settings.rewards.validation_hook "
                    "to its name, or pass hook=."
                )
            hook = get_hook(wiring.validation_hook)  # the stored name picks, never imports
        self._episodes.check_scope(episode_id, scope)  # before anything is written
        verdict = run_hook(hook, text, context or {}, wiring.validation_timeout_s)
        name = wiring.validation_hook or getattr(hook, "__qualname__", repr(hook))
        row = {
            "at": datetime.now(UTC),
            "episode_id": episode_id,
            "hook": name,
            "output": text,
            "passed": verdict.passed,
            "flagged": verdict.passed is not True,
            "error": verdict.error,
        }
        with self._lock:
            self._buffer.add_rows(schemas.VALIDATIONS, [row])
            self._flusher.maybe_flush()  # durable mode: stored before this returns
        reward = None
        if verdict.passed is not None:
            value = wiring.validation_pass if verdict.passed else wiring.validation_fail
            reward = self._rewards.apply_reward(
                episode_id,
                value,
                source="validation",
                signal="pass" if verdict.passed else "fail",
                idempotency_key=idempotency_key,
                scope=scope,
            )
        return ValidationResult(verdict.passed, verdict.passed is not True, verdict.error, reward)

    def resolve(
        self,
        episode_id: str,
        response: str,
        success: bool | None = None,
        *,
        idempotency_key: str | None = None,
        scope: str | None = None,
    ) -> ResolveResult:
        """Store the episode's response and score it against the past (intrinsic reward).

        ``success`` (if known) is an explicit reward of +1/-1. The intrinsic reward
        (``packs/rewards/intrinsic.py``) uses the stored utilities as of the last flush, is
        blended at ``intrinsic_weight`` and is silent on a cold store.
        """
        self._store.require_writable("resolve an episode")
        text = check_text(response, "response", self._settings.value.max_text_chars)
        if success is not None and not isinstance(success, bool):
            raise InvalidInput(f"success must be True, False or None, got {success!r}.")
        self._episodes.check_scope(episode_id, scope)  # before the response is written
        episode = self._episodes.episode(episode_id, ["query_embedding"])
        vector = self._embedder.embed([text])[0]
        key = idempotency_key or uuid.uuid4().hex
        with self._lock:
            self._episodes.record_outcome(episode_id, text, vector, success)
            self._flusher.maybe_flush()  # durable mode: stored before this returns
        success_reward = None
        if success is not None:
            success_reward = self._rewards.apply_reward(
                episode_id,
                1.0 if success else -1.0,
                source="explicit",
                signal="success",
                idempotency_key=f"{key}:success",
                scope=scope,
            )
        wiring = self._settings.value.rewards
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
            intrinsic = self._rewards.apply_reward(
                episode_id,
                wiring.intrinsic_weight * r_int,
                source="intrinsic",
                signal="intrinsic",
                magnitude=r_int,
                idempotency_key=f"{key}:intrinsic",
                scope=scope,
            )
        return ResolveResult(episode_id, r_int, len(successes), success_reward, intrinsic)

    def _response_pool(self, query: np.ndarray, condition: str) -> np.ndarray:
        """Response vectors of memories with similar intents that meet ``condition``."""
        clause = (
            f"kind = {sql_literal(schemas.KIND_MEMORY)} AND response_embedding IS NOT NULL "
            f"AND {condition}"
        )
        wiring = self._settings.value.rewards
        limit = wiring.intrinsic_candidates
        hits = self._store.search(
            schemas.MEMORIES, query, ["response_embedding"], clause, limit=limit
        )
        similarity = similarity_from_distance(hits["_distance"].to_numpy())
        keep = similarity >= wiring.intrinsic_neighbour_similarity
        vectors = hits["response_embedding"].to_pylist()
        return np.array([v for v, k in zip(vectors, keep, strict=True) if k], dtype=np.float64)
