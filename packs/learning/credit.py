"""Which injected memories answered a question, from the rewards of its episodes.

An episode's reward usually goes to every memory it injected (MemRL's episode credit):
a success says *at least one* of them helped, a failure that *none* did. Read item by
item, a success credits the bystanders beside the helpful memory as much as the memory
itself, and a replay would then score any slate holding a bystander as a success. So a
question's evidence is read as a noisy-OR over its slates (the "explaining away" of slate
credit assignment): each memory injected at the question is relevant or not, a prior
``p0`` each, and an episode's outcome is "any of its slate relevant", flipped with
probability ``eps`` (:mod:`packs.learning.reliability`). :class:`QuestionCredit` holds the
exact posterior over the memories injected there (enumerated; at most
:data:`MAX_ENUMERATED`, the most often credited first), and
:meth:`QuestionCredit.success` gives the probability that a slate would have succeeded.

Episodes whose memories got rewards of different signs (item credit: ``signal`` with
``memory_ids``) are evidence about each memory on its own.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from packs.learning.reliability import PRIOR_PAIRS, flip_rate

MAX_ENUMERATED = 10  # 2**10 relevance patterns per question; the rest keep the prior
# Hand-set floor on the flip rate: with none, one contrary reward would make a pattern
# impossible (zero likelihood) instead of unlikely.
MIN_FLIP = 0.01
# Hand-set: p0 and the flip rate move the posteriors only in steps of 0.05, so a new
# question's first outcome does not recompute every question's posterior.
STEP = 0.05
# Hand-set: a question's best memory vouches for it as a link only once the evidence
# raised it this far above the prior (a slate never credited leaves every member at p0).
SUPPORT_MARGIN = 0.05


@dataclass(frozen=True)
class Slate:
    """One rewarded episode of a question: what it injected and how each was rewarded."""

    memories: tuple[str, ...]
    rewards: tuple[float, ...]  # one per memory (0 for a memory the reward skipped)

    @property
    def episode_level(self) -> bool:
        signs = {r > 0 for r in self.rewards if r != 0}
        return len(signs) == 1


def _stepped(value: float) -> float:
    return round(round(value / STEP) * STEP, 6)


@functools.cache
def _patterns(n: int) -> np.ndarray:
    """Every relevance pattern of ``n`` memories (read-only; one row when ``n`` is 0)."""
    if n == 0:
        return np.zeros((1, 0), dtype=bool)
    out = np.array(list(itertools.product((False, True), repeat=n)), dtype=bool)
    out.flags.writeable = False
    return out


class QuestionCredit:
    """The posterior of which memories are relevant to one question (module docstring)."""

    def __init__(self, slates: Sequence[Slate], p0: float, eps: float) -> None:
        credited: dict[str, int] = {}
        for slate in slates:
            for memory, reward in zip(slate.memories, slate.rewards, strict=True):
                credited[memory] = credited.get(memory, 0) + (reward > 0)
        ranked = sorted(credited, key=lambda m: -credited[m])[:MAX_ENUMERATED]
        self._column = {m: i for i, m in enumerate(ranked)}
        self.p0 = p0
        n = len(ranked)
        patterns = _patterns(n)
        count = patterns.sum(axis=1)
        log_w = count * np.log(p0) + (n - count) * np.log1p(-p0)
        eps = max(eps, MIN_FLIP)
        hit, miss = np.log1p(-eps), np.log(eps)
        for slate in slates:
            if slate.episode_level:
                cols = [self._column[m] for m in slate.memories if m in self._column]
                success = next(r > 0 for r in slate.rewards if r != 0)
                any_relevant = patterns[:, cols].any(axis=1)
                log_w += np.where(any_relevant == success, hit, miss)
                continue
            for memory, reward in zip(slate.memories, slate.rewards, strict=True):
                if reward != 0 and memory in self._column:
                    relevant = patterns[:, self._column[memory]]
                    log_w += np.where(relevant == (reward > 0), hit, miss)
        weights = np.exp(log_w - log_w.max())
        self._patterns = patterns
        self._weights = weights / weights.sum()
        self._relevance = self._weights @ patterns  # each column's marginal, once

    def relevance(self, memory: str) -> float:
        """The posterior probability that ``memory`` is relevant to the question."""
        col = self._column.get(memory)
        if col is None:
            return self.p0
        return float(self._relevance[col])

    def success(self, slate: Sequence[str]) -> float:
        """The probability that ``slate`` holds a relevant memory: exact over the
        enumerated memories, the prior ``p0`` each for the rest (independent)."""
        cols = [self._column[m] for m in slate if m in self._column]
        others = sum(1 for m in slate if m not in self._column)
        none = 1.0
        if cols:
            none = float(self._weights[~self._patterns[:, cols].any(axis=1)].sum())
        return 1.0 - none * (1.0 - self.p0) ** others


def prior_relevance(first_success: float, k2: int) -> float:
    """``p0``: the chance that one candidate a ranking puts in the slate is relevant, from
    the share of questions whose first episode succeeded, ``1 - (1 - p0)**k2``; clipped
    to [0.02, 0.5] so one lucky or unlucky Pack can't make it certain."""
    if k2 <= 0:
        return 0.5
    s = float(np.clip(first_success, 0.0, 1.0))
    return float(np.clip(1.0 - (1.0 - s) ** (1.0 / k2), 0.02, 0.5))


def slate_shares(rewards: Mapping[str, float], relevance: Mapping[str, float]) -> dict[str, float]:
    """Each slate member's share of one episode's reward (a multiplier of its weight).

    An episode-level success (every member rewarded > 0) is split by responsibility:
    ``rel(m) / sum_j rel(j)`` over the slate, so a bystander that only shared slates
    with the answer takes little and a memory that is the common factor of the
    successes takes most. An episode-level failure says no member helped (noisy-OR), so
    each takes the blame unless the evidence says it is relevant anyway (a flipped
    reward): ``1 - rel(m)``. Item-level rewards (members rewarded with different signs:
    ``signal`` with ``memory_ids``, ``acted_on``/``ignored``) are the caller's own credit
    and keep their weight (1), as does a reward of 0.
    """
    signs = {r > 0 for r in rewards.values() if r != 0}
    if len(signs) != 1:
        return {m: 1.0 for m in rewards}
    if signs == {False}:
        return {m: (1.0 if r == 0 else 1.0 - relevance[m]) for m, r in rewards.items()}
    total = sum(relevance[m] for m, r in rewards.items() if r > 0)
    return {m: (relevance[m] / total if r > 0 and total > 0 else 1.0) for m, r in rewards.items()}


@dataclass
class _Episode:
    question: bytes
    rewards: dict[str, float] = field(default_factory=dict)  # in slate order
    shares: tuple[QuestionCredit, dict[str, float]] | None = None  # under that posterior


class SlateEvidence:
    """The contextual index's rewarded slates, per question, and the credit they imply.

    A question is one wording (an exact repeat embeds to the same vector; its key is the
    vector's float16 bytes). What it holds is exactly the reward entries the index keeps
    (each memory's newest ``history``): an entry leaves here when it leaves the index, so
    the credit is a function of the kept evidence, the same in a handle that saw every
    reward online and in one that loaded the log. The prior ``p0`` comes from the share
    of questions whose first kept slate succeeded (:func:`prior_relevance`), the flip rate
    from disagreeing rewards of one memory at one question
    (:mod:`packs.learning.reliability`); both move in steps of :data:`STEP`, so a
    posterior is recomputed only when they really moved.
    """

    def __init__(self) -> None:
        self._episodes: dict[str, _Episode] = {}
        self._questions: dict[bytes, list[str]] = {}  # question -> its episodes, in order
        self._posterior: dict[bytes, tuple[tuple[float, float], QuestionCredit]] = {}
        self._best: dict[bytes, tuple[QuestionCredit, str | None]] = {}
        # running totals behind the prior, kept exact on every add and remove
        self._signs: dict[tuple[bytes, str], tuple[int, int]] = {}  # (positives, negatives)
        self._pairs = [0, 0]  # agreeing, disagreeing pairs of one memory's rewards
        self._first: dict[bytes, bool] = {}  # did the question's first kept slate succeed
        self._sizes: Counter[int] = Counter()  # slate sizes of the kept episodes
        self.version = 0  # bumped on every change: cached credit is stale
        self._prior: tuple[int, tuple[float, float]] = (-1, (0.5, MIN_FLIP))

    def add(self, episode: str, question: bytes, memory: str, reward: float) -> set[str]:
        """One kept reward entry; the memories whose credit it may change."""
        item = self._episodes.get(episode)
        if item is None:
            item = self._episodes[episode] = _Episode(question)
            self._questions.setdefault(question, []).append(episode)
        else:
            self._sizes[len(item.rewards)] -= 1
        old = item.rewards.get(memory)
        if old is not None:
            self._count(question, memory, old, -1)
        item.rewards[memory] = reward
        self._sizes[len(item.rewards)] += 1
        self._count(question, memory, reward, 1)
        return self._changed(item.question)

    def remove(self, episode: str, memory: str) -> set[str]:
        """An entry the index no longer keeps; the memories whose credit it may change."""
        item = self._episodes.get(episode)
        if item is None or memory not in item.rewards:
            return set()
        self._sizes[len(item.rewards)] -= 1
        self._count(item.question, memory, item.rewards.pop(memory), -1)
        changed = self._changed(item.question) | {memory}
        if item.rewards:
            self._sizes[len(item.rewards)] += 1
        else:
            del self._episodes[episode]
            episodes = self._questions[item.question]
            episodes.remove(episode)
            if not episodes:
                del self._questions[item.question]
            self._first_changed(item.question)
        return changed

    @property
    def questions(self) -> int:
        """Distinct rewarded questions kept (how cold the Pack is)."""
        return len(self._questions)

    def share(self, episode: str | None, memory: str) -> float:
        """``memory``'s share of ``episode``'s reward (:func:`slate_shares`); 1 for an
        entry without a known episode."""
        item = self._episodes.get(episode) if episode is not None else None
        if item is None or memory not in item.rewards:
            return 1.0
        if len(item.rewards) == 1 and next(iter(item.rewards.values())) > 0:
            return 1.0
        credit = self.posterior(item.question)
        if item.shares is None or item.shares[0] is not credit:
            relevance = {m: credit.relevance(m) for m in item.rewards}
            item.shares = (credit, slate_shares(item.rewards, relevance))
        return item.shares[1][memory]

    def best(self, question: bytes) -> str | None:
        """The memory most probably relevant at ``question``, if the evidence raised it
        above the prior (ties: the earliest in its first slate, the ranking's best
        guess); None when nothing there was credited."""
        episodes = self._questions.get(question)
        if not episodes:
            return None
        credit = self.posterior(question)
        cached = self._best.get(question)
        if cached is not None and cached[0] is credit:
            return cached[1]
        seen: dict[str, int] = {}
        for episode in episodes:
            for position, memory in enumerate(self._episodes[episode].rewards):
                seen.setdefault(memory, position)
        ranked = sorted(seen, key=lambda m: (-round(credit.relevance(m), 9), seen[m]))
        best = ranked[0] if credit.relevance(ranked[0]) > credit.p0 + SUPPORT_MARGIN else None
        self._best[question] = (credit, best)
        return best

    def posterior(self, question: bytes) -> QuestionCredit:
        """The question's :class:`QuestionCredit` under the current prior and flip rate."""
        prior = self.prior()
        cached = self._posterior.get(question)
        if cached is not None and cached[0] == prior:
            return cached[1]
        slates = [
            Slate(tuple(e.rewards), tuple(e.rewards.values()))
            for e in (self._episodes[x] for x in self._questions.get(question, ()))
        ]
        credit = QuestionCredit(slates, *prior)
        self._posterior[question] = (prior, credit)
        return credit

    def prior(self) -> tuple[float, float]:
        """(``p0``, flip rate) from the kept evidence, in steps of :data:`STEP`."""
        if self._prior[0] != self.version:
            self._prior = (self.version, self._estimate())
        return self._prior[1]

    def _estimate(self) -> tuple[float, float]:
        if not self._first:
            return (0.5, MIN_FLIP)
        sizes = sorted(self._sizes.elements())
        k2 = sizes[len(sizes) // 2] if sizes else 1
        p0 = prior_relevance(sum(self._first.values()) / len(self._first), k2)
        agree, disagree = self._pairs
        eps = flip_rate(disagree / (agree + disagree + PRIOR_PAIRS))
        # a step never reaches a certain prior: p0 stays within [STEP, 0.5]
        return (min(max(_stepped(p0), STEP), 0.5), max(_stepped(eps), MIN_FLIP))

    def _count(self, question: bytes, memory: str, reward: float, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) one reward in the flip-rate pairs."""
        if reward == 0:
            return
        key = (question, memory)
        p, n = self._signs.get(key, (0, 0))
        self._pairs[0] -= p * (p - 1) // 2 + n * (n - 1) // 2
        self._pairs[1] -= p * n
        p, n = (p + sign, n) if reward > 0 else (p, n + sign)
        self._pairs[0] += p * (p - 1) // 2 + n * (n - 1) // 2
        self._pairs[1] += p * n
        if p or n:
            self._signs[key] = (p, n)
        else:
            self._signs.pop(key, None)

    def _first_changed(self, question: bytes) -> None:
        episodes = self._questions.get(question)
        if not episodes:
            self._first.pop(question, None)
            return
        self._first[question] = any(r > 0 for r in self._episodes[episodes[0]].rewards.values())

    def _changed(self, question: bytes) -> set[str]:
        self._first_changed(question)
        self.version += 1
        self._posterior.pop(question, None)
        return {m for e in self._questions.get(question, ()) for m in self._episodes[e].rewards}
