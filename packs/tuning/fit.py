"""The fit: what a Pack's own episodes support, and whether to adopt it.

Two questions, each answered from the log and adopted only when questions held out from
the fit say so (:mod:`packs.tuning.gate`):

1. **How far a reward carries.** Proposals: the settings in force; links off; the
   kernel's reach raised to near-identical wording (cosine 0.9) or to the same question
   only (0.97), links off, exact repeats weighing what they did (kappa scaled with
   ``1 - theta``). The one with the best replayed success *as new questions*
   (:func:`packs.tuning.replay.new_questions`: each question ranked with the other
   questions' rewards only) on the fit half of the questions is compared on the test
   half with the settings in force. Where a Pack's close questions have different
   answers (siblings), the rewards of one stop carrying to the others.
2. **How much one reward counts.** The flip rate of the Pack's rewards
   (:mod:`packs.tuning.reliability`) gives kappa, the prior's weight in rewards; it is
   compared with the kappa in force by how well ``U(m | q)`` predicts the later rewards
   of the test half's questions (:func:`packs.tuning.replay.prediction_errors`).

The blend of Phase B (lambda, the BM25 weight) is not fitted: a logged ranking shows
only what was injected, and without randomised exploration a replay can't say what
another blend would have found (it preferred whatever agreed with the past rankings;
docs/tuning.md).

A Pack with too little evidence (fewer than :data:`MIN_QUESTIONS` rewarded questions on
either half) keeps its settings and says why: a cold Pack keeps the defaults.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from packs.lazy import lazy_module
from packs.learning.ema import REVISION_SOURCE
from packs.learning.reliability import disagreement, flip_rate, noisy_kappa
from packs.settings import ContextSettings, PackSettings
from packs.tuning import replay
from packs.tuning.gate import SHARED, Comparison, compare
from packs.tuning.logs import TuningLog

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

MIN_QUESTIONS = 20  # hand-set: fewer held-out questions than this can't bound a difference
FOLDS = 4  # question folds of the new-question replay
KERNEL_REACH = (0.9, 0.97)  # hand-set: near-identical wording, and the same question only
MAX_QUESTIONS = 1_000  # cost bound: questions replayed per half (a 95 % bound within 2 points)
MIN_KAPPA_CHANGE = 0.1  # hand-set: a fitted kappa within 10 % of the one in force is no change
_DEFAULTS = ContextSettings()  # the base kappa and theta (docs/settings.md)


@dataclass(frozen=True)
class Decision:
    """One question of the fit: what was proposed, and the held-out comparison."""

    changes: dict[str, Any]
    comparison: Comparison
    proposals: dict[str, float] = field(default_factory=dict)  # fit-half scores

    @property
    def adopted(self) -> bool:
        return self.comparison.better


@dataclass(frozen=True)
class Fit:
    """What one tuning run found and decided."""

    changes: dict[str, Any]  # every adopted change ({} when none)
    reason: str
    evidence: dict[str, Any]
    decisions: dict[str, Decision] = field(default_factory=dict)

    @property
    def adopted(self) -> bool:
        return bool(self.changes)


def evidence_of(log: TuningLog) -> dict[str, Any]:
    """What the log holds, and the flip rate of its rewards."""
    events = log.rewards.filter(pl.col("source") != REVISION_SOURCE)
    signs: list[tuple[int, int]] = []
    if events.height:
        keyed = events.with_columns(
            pl.Series("question", log.question[events["episode"].to_numpy()])
        )
        counts = keyed.group_by(["question", "memory_id"]).agg(
            (pl.col("value") > 0).sum().alias("pos"), (pl.col("value") < 0).sum().alias("neg")
        )
        signs = list(zip(counts["pos"].to_list(), counts["neg"].to_list(), strict=True))
    d, pairs = disagreement(signs)
    rewarded = np.flatnonzero(log.rewarded)
    scopes = _scope_flip_rates(log, events)
    eps = flip_rate(d) if len(scopes) < 2 else float(np.median([e for e, _ in scopes.values()]))
    return {
        "episodes": len(log),
        "rewarded_episodes": len(rewarded),
        "questions": len(np.unique(log.question)) if len(log) else 0,
        "rewarded_questions": len(np.unique(log.question[rewarded])),
        "reward_events": events.height,
        "repeat_pairs": pairs,
        "disagreement": d,
        "flip_rate": eps,
        "scopes": {scope: {"flip_rate": e, "questions": n} for scope, (e, n) in scopes.items()},
    }


def _scope_flip_rates(log: TuningLog, events: pl.DataFrame) -> dict[str, tuple[float, int]]:
    """Each scope's own flip rate and rewarded questions: the Pack's flip rate is their
    median when there are several, so one scope's rewards (a hostile user's, rating its
    own questions at random) count for one scope, not for all its pairs."""
    if not events.height:
        return {}
    questions = log.question[events["episode"].to_numpy()]
    labels = [log.scope_of(int(q)) or SHARED for q in questions.tolist()]
    keyed = events.with_columns(pl.Series("question", questions), pl.Series("scope", labels))
    counts = keyed.group_by(["scope", "question", "memory_id"]).agg(
        (pl.col("value") > 0).sum().alias("pos"), (pl.col("value") < 0).sum().alias("neg")
    )
    out: dict[str, tuple[float, int]] = {}
    for (scope,), group in counts.group_by("scope", maintain_order=True):
        pairs = zip(group["pos"].to_list(), group["neg"].to_list(), strict=True)
        out[str(scope)] = (flip_rate(disagreement(pairs)[0]), group["question"].n_unique())
    return dict(sorted(out.items()))


def scopes_of(log: TuningLog, questions: set[int]) -> dict[int, str]:
    """Each question's scope label (:data:`packs.tuning.gate.SHARED` without one)."""
    return {q: log.scope_of(q) or SHARED for q in questions}


def halves(questions: Sequence[int], log: TuningLog) -> tuple[set[int], set[int]]:
    """Questions split by a hash of their first query vector: the fit and the test half
    (the same question lands on the same side in every run and as the log grows)."""
    first: dict[int, int] = {}
    for e, q in enumerate(log.question.tolist()):
        first.setdefault(int(q), e)
    keyed = []
    for q in questions:
        vector = np.round(log.query[first[q]], 4).astype(np.float32)
        keyed.append((hashlib.sha256(vector.tobytes()).digest(), q))
    keyed.sort()
    fit_half = {q for digest, q in keyed if digest[0] % 2 == 0}
    test_half = {q for digest, q in keyed if digest[0] % 2 == 1}
    # at most MAX_QUESTIONS a half, the first by hash: a sample the log's growth keeps
    order = {q: i for i, (_, q) in enumerate(keyed)}
    return (
        set(sorted(fit_half, key=order.__getitem__)[:MAX_QUESTIONS]),
        set(sorted(test_half, key=order.__getitem__)[:MAX_QUESTIONS]),
    )


def carry_proposals(s: PackSettings) -> dict[str, dict[str, Any]]:
    """How far a reward carries: links off, the kernel's reach raised (exact repeats kept)."""
    c = s.context
    out: dict[str, dict[str, Any]] = {"links off": {"context.links": 0}} if c.links else {}
    for theta in KERNEL_REACH:
        if theta > c.theta:
            kappa = c.kappa * (1.0 - theta) / (1.0 - c.theta)
            out[f"reach {theta}"] = {
                "context.theta": theta,
                "context.kappa": kappa,
                "context.links": 0,
            }
    return out


def reliable_kappa(s: PackSettings, eps: float) -> float:
    """The default kappa on the scale of the kernel in force, for rewards flipped at ``eps``."""
    clean = _DEFAULTS.kappa * (1.0 - s.context.theta) / (1.0 - _DEFAULTS.theta)
    return noisy_kappa(clean, eps)


def fit(log: TuningLog, settings: PackSettings, dim: int) -> Fit:
    """Fit and gate each question (the module docstring)."""
    found = evidence_of(log)
    credit = replay.credits(log, found["flip_rate"])
    fit_half, test_half = halves(sorted(credit), log)
    found.update(fit_questions=len(fit_half), test_questions=len(test_half))
    if min(len(fit_half), len(test_half)) < MIN_QUESTIONS:
        reason = (
            f"too little evidence: {len(credit)} rewarded questions, {2 * MIN_QUESTIONS} "
            "needed; the settings in force stay"
        )
        return Fit({}, reason, found)
    decisions: dict[str, Decision] = {}
    carry = _carry(log, settings, dim, credit, fit_half, test_half)
    if carry is not None:
        decisions["carry"] = carry
    current = settings.replace(**carry.changes) if carry is not None and carry.adopted else settings
    kappa = _reliability(log, current, dim, found["flip_rate"], test_half)
    if kappa is not None:
        decisions["reliability"] = kappa
    changes = {k: v for d in decisions.values() if d.adopted for k, v in d.changes.items()}
    return Fit(changes, _reason(decisions), found, decisions)


def _carry(
    log: TuningLog,
    settings: PackSettings,
    dim: int,
    credit: dict[int, Any],
    fit_half: set[int],
    test_half: set[int],
) -> Decision | None:
    proposals = carry_proposals(settings)
    if not proposals:
        return None
    trials = [settings, *(settings.replace(**c) for c in proposals.values())]
    scores = [
        _mean(v) for v in replay.new_questions(log, trials, dim, credit, FOLDS, questions=fit_half)
    ]
    tried = {"in force": scores[0], **dict(zip(proposals, scores[1:], strict=True))}
    best = int(np.argmax(scores))  # the first of equals: no change without a gain
    if best == 0:
        return Decision({}, Comparison(0, 0, scores[0], scores[0], 0.0, 0.0, 0.0), tried)
    changes = list(proposals.values())[best - 1]
    fitted, in_force = replay.new_questions(
        log, [trials[best], settings], dim, credit, FOLDS, questions=test_half
    )
    return Decision(changes, compare(fitted, in_force, groups=scopes_of(log, test_half)), tried)


def _reliability(
    log: TuningLog, settings: PackSettings, dim: int, eps: float, test_half: set[int]
) -> Decision | None:
    kappa = reliable_kappa(settings, eps)
    if abs(kappa - settings.context.kappa) <= MIN_KAPPA_CHANGE * settings.context.kappa:
        return None
    fitted, in_force = replay.prediction_errors(
        log, [settings.replace(**{"context.kappa": kappa}), settings], dim, questions=test_half
    )
    # errors: lower is better, so the gain is in force minus fitted
    groups = scopes_of(log, test_half)
    return Decision(
        {"context.kappa": kappa}, compare(in_force, fitted, groups=groups), {"flip rate": eps}
    )


def _reason(decisions: dict[str, Decision]) -> str:
    if not decisions:
        return "nothing to propose: the settings in force replay best"
    parts = []
    for name, d in decisions.items():
        c = d.comparison
        if not d.changes:
            parts.append(f"{name}: the settings in force replay best on the fit half")
        elif d.adopted:
            parts.append(
                f"{name}: adopted ({c.difference:+.3f} on {c.questions} held-out "
                f"questions, 95% bound {c.low:+.3f}; scopes: {', '.join(c.scopes) or SHARED})"
            )
        elif c.refused_by is not None:
            parts.append(
                f"{name}: refused: scope {c.refused_by!r} would lose "
                f"{-c.scopes[c.refused_by]:.3f} on its held-out questions"
            )
        else:
            parts.append(
                f"{name}: kept the settings in force (95% bound {c.low:+.3f} on "
                f"{c.questions} held-out questions)"
            )
    return "; ".join(parts)


def _mean(values: dict[int, float]) -> float:
    return float(np.mean(list(values.values()))) if values else 0.0
