"""Rewards for one open Pack: every source lands in :meth:`RewardService.apply_reward`.

It appends one typed event per memory (episode, memory, source, signal, magnitude,
value, weight, time, idempotency key) and moves utility and confidence online. Per-Pack
wiring (``settings.rewards``) decides each source's weight; a switched-off source is
still recorded, with weight 0. Validation and intrinsic reward, which call this
service, are in :mod:`packs.rewards.verdicts`.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from packs.errors import UnknownMemory
from packs.events import EngineEvents
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.learning.ema import RewardStep, failure_shares
from packs.records import FeedbackResult, VoteResult
from packs.rewards.idempotency import IdempotencyKeys
from packs.rewards.kinds import Reward
from packs.rewards.ledger import RewardLedger
from packs.rewards.sources import RewardEvent, event_of, normalise_answer, tally_vote
from packs.settings import ActiveSettings
from packs.store.gateway import PackStore
from packs.validation import check_episode_id, check_memory_ids, check_text, check_unit_interval

# A reward's source and signal are short labels (hand-set: far above any vocabulary name).
_LABEL_CHARS = 200


class RewardService:
    """Applies rewards to the memories an episode injected."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        episodes: EpisodeLog,
        keys: IdempotencyKeys,
        ledger: RewardLedger,
        flusher: Flusher,
        lock: threading.RLock,
        events: EngineEvents,
    ) -> None:
        self._store = store
        self._settings = settings
        self._episodes = episodes
        self.keys = keys  # the idempotency keys it checks (bounded cache + log)
        self._ledger = ledger
        self._flusher = flusher
        self._lock = lock
        # ``reward_landed`` after each reward that landed, outside the lock: the Pack's
        # automatic tune when one is due (packs/tuning/service.py); ``episode_confirmed``
        # on a positive one under the admission policy: the memories held from the
        # episode are confirmed (packs/probation.py). Both in packs/events.py.
        self._events = events

    def reward(
        self,
        episode_id: str,
        reward: Reward,
        *,
        idempotency_key: str | None = None,
        scope: str | None = None,
    ) -> FeedbackResult:
        """One reward of ``episode_id``, of any kind (:mod:`packs.rewards.kinds`), turned
        into its event by :func:`~packs.rewards.sources.event_of` and applied."""
        event = event_of(reward, self._settings.value.rewards)
        return self._apply(episode_id, event, 1.0, idempotency_key, scope)

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
        scope: str | None = None,
    ) -> FeedbackResult:
        """Append one typed reward event per memory and move their utilities.

        ``value`` is in [-1, 1]. The step is ``alpha * w * (r - Q)`` where ``w`` is
        ``weight`` times the Pack's weight for ``source``. ``memory_ids`` (item-level
        credit) defaults to every memory injected in the episode. A caller in ``scope``
        rewards only episodes recalled in it (:meth:`EpisodeLog.check_scope`).
        """
        self._store.require_writable("record a reward")
        value = check_unit_interval(value, "reward value")
        event = RewardEvent(value, source, signal, magnitude, memory_ids)
        return self._apply(episode_id, event, weight, idempotency_key, scope)

    def _apply(
        self,
        episode_id: str,
        event: RewardEvent,
        weight: float,
        idempotency_key: str | None,
        scope: str | None,
    ) -> FeedbackResult:
        """The one path every reward takes to the log (docs/architecture.md)."""
        self._store.require_writable("record a reward")
        weight = check_unit_interval(weight, "reward weight", 0.0, 1.0)
        episode_id = check_episode_id(episode_id)
        memory_ids = check_memory_ids(event.memory_ids)
        if idempotency_key is not None:
            check_text(idempotency_key, "idempotency_key", 512)
        source = check_text(event.source, "reward source", _LABEL_CHARS)
        signal = check_text(event.signal, "reward signal", _LABEL_CHARS)
        value = event.value
        key = idempotency_key or uuid.uuid4().hex
        settings = self._settings.value
        wiring = settings.rewards
        step = RewardStep(
            value, wiring.alpha, weight * wiring.weight(source), wiring.confidence_rate
        )
        self._episodes.arrive(episode_id, settings.flush.seconds)  # another process's
        with self._lock:
            self._episodes.check_scope(episode_id, scope)
            injected = self._episodes.injected_ids(episode_id)
            # Each memory is credited once, however often the caller names it.
            targets = list(dict.fromkeys(injected if memory_ids is None else memory_ids))
            unknown = sorted(set(targets) - set(injected))
            if unknown:
                raise UnknownMemory(
                    f"Memories {unknown} were not injected in episode {episode_id!r}; "
                    "rewards go only to what the episode used."
                )
            if idempotency_key is not None and self.keys.seen(episode_id, key):
                # Durable mode: a redelivery of a call whose commit failed retries it,
                # and raises again rather than report as stored what is only buffered.
                self._flusher.maybe_flush()
                return FeedbackResult(episode_id, source, value, 0, True, {}, {})
            shares = None
            if value < 0 and memory_ids is None and wiring.blame_relief > 0:
                ranked = self._episodes.ranked_utility(episode_id)
                shares = failure_shares(ranked, targets, wiring.blame_relief)
            query = self._episodes.query_vector(episode_id)  # fetched once per reward
            utilities, ranked = self._ledger.record(
                episode_id,
                targets,
                step,
                query,
                key=key,
                source=source,
                signal=signal,
                magnitude=event.magnitude,
                keyed=idempotency_key is not None,
                shares=shares,
            )
            if value > 0 and settings.admission.policy == "on":
                self._events.episode_confirmed.emit(episode_id, datetime.now(UTC))
            self._flusher.maybe_flush()
        self._events.reward_landed.emit()
        return FeedbackResult(episode_id, source, value, len(utilities), False, utilities, ranked)

    def vote(
        self,
        attempts: Mapping[str, str],
        *,
        idempotency_key: str | None = None,
        scope: str | None = None,
    ) -> VoteResult:
        """Majority vote over attempts ``{episode_id: answer}`` (see ``tally_vote``).

        Memories behind the majority answer get ``+vote_reward``, those behind a minority
        answer ``-vote_reward``. A tie at the top rewards nobody. Every episode is checked
        before any reward is written.
        """
        tally = tally_vote(attempts, self._settings.value.rewards.vote_reward)
        for episode_id in attempts:  # UnknownEpisode (or another scope's) before any write
            self._episodes.arrive(episode_id, self._settings.value.flush.seconds)
            self._episodes.check_scope(episode_id, scope)
        key = idempotency_key or uuid.uuid4().hex
        rewards = {}
        for episode_id, value in tally.values.items():
            answer = normalise_answer(attempts[episode_id])
            rewards[episode_id] = self.apply_reward(
                episode_id,
                value,
                source="vote",
                signal="majority" if value > 0 else "minority",
                magnitude=float(tally.counts[answer]),
                idempotency_key=f"{key}:{episode_id}",
                scope=scope,
            )
        return VoteResult(tally.winner, tally.counts, rewards)
