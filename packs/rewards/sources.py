"""Reward sources turned into values in [-1, 1]. Pure functions (the hook runner aside).

:func:`event_of` turns any reward kind (:mod:`packs.rewards.kinds`) into the one
:class:`RewardEvent` that :class:`~packs.rewards.service.RewardService` applies:

- explicit rating: the rating itself; stars 1..5 as ``(stars - 3) / 2``;
- measured outcome: ``tanh(amount / scale)`` with a per-Pack scale (a "clear" win);
- majority vote: ``+v`` behind the majority answer, ``-v`` behind a minority one, and a
  tie at the top rewards nobody;
- implicit signal: the Pack's vocabulary value (accepted, edited, ignored, acted_on, ...);
- validation hook (from the registry in ``packs/hooks.py``): ``validation_pass`` /
  ``validation_fail``; a hook that raises, hangs or returns a non-bool is recorded, not
  applied.

``docs/rewards.md`` lists the defaults and where they come from.
"""

from __future__ import annotations

import concurrent.futures
import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from packs.errors import InvalidReward
from packs.rewards.kinds import Outcome, Rating, Reward, Signal
from packs.settings import RewardSettings
from packs.validation import check_unit_interval


@dataclass(frozen=True)
class RewardEvent:
    """What one reward of an episode writes: its ``value`` in [-1, 1], the ``source`` and
    ``signal`` its events carry, the raw ``magnitude`` (kept for audits) and the
    ``memory_ids`` it concerns (None: every memory the episode injected)."""

    value: float
    source: str
    signal: str
    magnitude: float | None = None
    memory_ids: list[str] | None = None


def event_of(reward: Reward, wiring: RewardSettings) -> RewardEvent:
    """The event of one reward kind, under the Pack's wiring (vocabulary, outcome scale)."""
    match reward:
        case Rating(rating, stars):
            if (rating is None) == (stars is None):
                raise InvalidReward("Give exactly one of rating= (in [-1, 1]) or stars= (1-5).")
            if stars is not None:
                return RewardEvent(from_stars(stars), "explicit", "stars", float(stars))
            value = check_unit_interval(rating, "rating")
            return RewardEvent(value, "explicit", "rating", value)
        case Signal(name, memory_ids):
            value = from_signal(name, wiring.vocabulary)
            return RewardEvent(value, "implicit", name, value, memory_ids)
        case Outcome(amount):
            value = from_outcome(amount, wiring.outcome_scale)
            return RewardEvent(value, "outcome", "measured", float(amount))
    raise InvalidReward(f"A reward is a Rating, a Signal or an Outcome, not {reward!r}.")


def from_stars(stars: object) -> float:
    """Stars 1..5 to [-1, 1]: ``(stars - 3) / 2``."""
    if isinstance(stars, bool) or not isinstance(stars, int) or not 1 <= stars <= 5:
        raise InvalidReward(f"stars must be an int from 1 to 5, got {stars!r}.")
    return (stars - 3) / 2.0


def from_outcome(amount: object, scale: float) -> float:
    """A measured outcome (a P&L, a score delta) squashed by ``tanh(amount / scale)``."""
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        raise InvalidReward(f"outcome amount must be a number, got {type(amount).__name__}.")
    if not math.isfinite(float(amount)):
        raise InvalidReward(f"outcome amount must be finite, got {amount!r}.")
    return math.tanh(float(amount) / scale)


def from_signal(name: object, vocabulary: Mapping[str, float]) -> float:
    """An implicit signal's value from the Pack's vocabulary."""
    if not isinstance(name, str) or name not in vocabulary:
        raise InvalidReward(
            f"Unknown implicit signal {name!r}; this Pack knows {sorted(vocabulary)}. "
            "Add it to settings.rewards.vocabulary to use it."
        )
    return check_unit_interval(vocabulary[name], f"vocabulary[{name!r}]")


def normalise_answer(answer: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", answer).casefold().split())


@dataclass(frozen=True)
class VoteTally:
    """Which attempts voted with the majority. ``winner`` is None on a tie at the top."""

    winner: str | None
    counts: dict[str, int]
    values: dict[str, float]  # attempt (episode id) -> reward value; empty on a tie


def tally_vote(answers: Mapping[str, str], reward: float) -> VoteTally:
    """Majority vote over attempts ``{episode_id: answer}``.

    Answers are compared after Unicode normalisation, case folding and whitespace
    collapsing. The most common answer wins: attempts behind it get ``+reward``, the
    others ``-reward``. A tie for the most common answer has no majority, so nobody is
    rewarded (the tally still reports the counts). No attempts is an error.
    """
    if not answers:
        raise InvalidReward("A vote needs at least one attempt.")
    for episode_id, answer in answers.items():
        if not isinstance(answer, str) or not answer.strip():
            raise InvalidReward(f"Attempt {episode_id!r} has an empty or non-text answer.")
    normalised = {episode: normalise_answer(a) for episode, a in answers.items()}
    counts = Counter(normalised.values())
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return VoteTally(None, dict(counts), {})
    winner = ranked[0][0]
    values = {e: (reward if a == winner else -reward) for e, a in normalised.items()}
    return VoteTally(winner, dict(counts), values)


# --- validation hooks --------------------------------------------------------------------


@dataclass(frozen=True)
class HookVerdict:
    """``passed`` is None when the hook could not give a verdict (``error`` says why)."""

    passed: bool | None
    error: str | None = None


# One shared worker pool: a hook that hangs keeps one thread busy, never the caller.
_HOOK_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="hook")


def run_hook(
    hook: Callable[..., Any], output: str, context: Mapping[str, Any], timeout_s: float
) -> HookVerdict:
    """Call ``hook(output, context)`` with a timeout; never raises for the hook's faults."""
    future = _HOOK_POOL.submit(hook, output, dict(context))
    try:
        result = future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        return HookVerdict(None, f"timed out after {timeout_s:g} s")
    except Exception as exc:  # noqa: BLE001 - a hook's own failure is recorded, not raised
        text = f"raised {type(exc).__name__}: {exc}"[:500]  # stored: keep it valid UTF-8
        return HookVerdict(None, text.encode("utf-8", "backslashreplace").decode("utf-8"))
    if not isinstance(result, bool):
        return HookVerdict(None, f"returned {type(result).__name__}, not bool")
    return HookVerdict(result)
