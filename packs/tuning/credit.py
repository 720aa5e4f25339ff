"""Which injected memories answered a question, from the rewards of its episodes.

An episode's reward usually goes to every memory it injected (MemRL's episode credit):
a success says *at least one* of them helped, a failure that *none* did. Read item by
item, a success credits the bystanders beside the helpful memory as much as the memory
itself, and a replay would then score any slate holding a bystander as a success. So a
question's evidence is read as a noisy-OR over its slates (the "explaining away" of slate
credit assignment): each memory injected at the question is relevant or not, a prior
``p0`` each, and an episode's outcome is "any of its slate relevant", flipped with
probability ``eps`` (:mod:`packs.tuning.reliability`). :class:`QuestionCredit` holds the
exact posterior over the memories injected there (enumerated; at most
:data:`MAX_ENUMERATED`, the most often credited first), and
:meth:`QuestionCredit.success` gives the probability that a slate would have succeeded.

Episodes whose memories got rewards of different signs (item credit: ``signal`` with
``memory_ids``) are evidence about each memory on its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_ENUMERATED = 10  # 2**10 relevance patterns per question; the rest keep the prior
# Hand-set floor on the flip rate: with none, one contrary reward would make a pattern
# impossible (zero likelihood) instead of unlikely.
MIN_FLIP = 0.01


@dataclass(frozen=True)
class Slate:
    """One rewarded episode of a question: what it injected and how each was rewarded."""

    memories: tuple[str, ...]
    rewards: tuple[float, ...]  # one per memory (0 for a memory the reward skipped)

    @property
    def episode_level(self) -> bool:
        signs = {r > 0 for r in self.rewards if r != 0}
        return len(signs) == 1


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
        patterns = np.array(list(itertools.product((False, True), repeat=n)), dtype=bool)
        if n == 0:
            patterns = np.zeros((1, 0), dtype=bool)
        log_w = (patterns * np.log(p0) + ~patterns * np.log1p(-p0)).sum(axis=1)
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

    def relevance(self, memory: str) -> float:
        """The posterior probability that ``memory`` is relevant to the question."""
        col = self._column.get(memory)
        if col is None:
            return self.p0
        return float(self._weights[self._patterns[:, col]].sum())

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
