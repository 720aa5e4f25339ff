"""Score a lesson writer against hand-written reference lessons, with no LLM (issue 30).

``packs/data/lessons/episodes.jsonl`` holds 54 episodes (a memory, its outcome and its rewards)
with a reference lesson written by hand (provenance: ``packs/data/lessons/README.md``). A
writer (the template, an OpenAI-compatible endpoint, a client's model over MCP sampling,
or the recorded response as a floor) writes a lesson for each; each is scored against
its reference:

- ``rouge_l``: ROUGE-L F1 (Lin 2004) with Porter stemming, by ``rouge-score``: the longest
  common word subsequence, so order counts, deterministic and library-backed;
- ``cosine``: the cosine of the two lessons under the shipped embedder
  (all-MiniLM-L6-v2): tolerant of paraphrase, but blind to stance: "Avoid chasing a
  breakout" and "Chase the breakout" are close in it;
- ``stance_ok``: the lesson says *do* or *avoid* as the reference does (a failure is
  never an example to follow, docs/brief.md): "avoid" when it opens with "Avoid" or a
  negation ("Do not", "Never", "Don't");
- ``score``: ROUGE-L F1 when the stance agrees, else 0; a lesson the writer failed to
  give scores 0. The writer's score is the mean over every episode.

How to run (from the repository root)::

    wolfie lessons score --writer template            # or: response (the floor)
    wolfie lessons score --writer openai --base-url URL --model NAME   # WOLFIE_LLM_* too
    wolfie lessons score --writer sampling            # an MCP server on stdio: a
                                                      # sampling client calls score_lessons

Each writes ``lesson-scores-<writer>.json`` and ``.md`` under ``--out`` (out/lessons).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evals.jsonl import read_objects
from packs.data import bundled
from packs.errors import InvalidInput
from packs.learning.ema import RewardStep, fold
from packs.lessons.writers import (
    LessonEvidence,
    LessonWriter,
    LessonWriterError,
    check_lesson,
)
from packs.records import Record

DEFAULT_EPISODES = bundled("lessons", "episodes.jsonl")  # package data: a wheel ships it
ALPHA, CONFIDENCE_RATE = 0.3, 0.1  # the Pack defaults (MemRL's alpha; docs/settings.md)
STANCES = ("do", "avoid")
_TAG = re.compile(r"^\s*\[[^\]]*\]\s*")  # "[template lesson] ..." opens with a tag
_AVOID = re.compile(r"^(avoid|never|do not|don't|dont|stop)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ReferenceEpisode:
    id: str
    domain: str
    intent: str
    response: str
    outcome: str
    polarity: str
    rewards: tuple[float, ...]
    reference: str
    stance: str

    def evidence(self) -> LessonEvidence:
        """What a writer sees: the memory and its rewards folded as a Pack folds them."""
        state = fold(RewardStep(r, ALPHA, 1.0, CONFIDENCE_RATE) for r in self.rewards)
        return LessonEvidence(
            memory_id=self.id,
            kind="memory",
            intent=self.intent,
            response=self.response,
            outcome=self.outcome,
            polarity=self.polarity,
            utility=state.utility,
            confidence=state.confidence,
            reward_count=state.reward_count,
            recent_rewards=self.rewards[-5:],
            previous_lesson=None,
        )


@dataclass(frozen=True)
class LessonScore(Record):
    id: str
    lesson: str | None  # None: the writer gave none (``error`` says why)
    rouge_l: float
    cosine: float
    stance_ok: bool
    score: float
    error: str | None = None


@dataclass(frozen=True)
class WriterScore(Record):
    """A writer's scores over the reference episodes (means over every episode)."""

    writer: str
    model: str | None
    episodes: int
    written: int
    score: float
    rouge_l: float
    cosine: float
    stance_agreement: float
    per_domain: dict[str, float]
    lessons: tuple[LessonScore, ...] = field(default=())


class ResponseAsLesson(LessonWriter):
    """The floor: the recorded response, as it is, is the lesson."""

    name = "response"

    def write(self, evidence: LessonEvidence) -> str:
        return check_lesson(evidence.response or evidence.intent, self.name)


def stance_of(lesson: str) -> str:
    """ "avoid" when the lesson (after a leading ``[tag]``) opens with Avoid or a
    negation, else "do"."""
    return "avoid" if _AVOID.match(_TAG.sub("", lesson)) else "do"


def load_episodes(path: str | Path = DEFAULT_EPISODES) -> list[ReferenceEpisode]:
    """Read the reference episodes; a malformed line raises InvalidInput naming it."""
    return read_objects(path, _parse, "episodes")


def _parse(obj: dict[str, Any], where: str) -> ReferenceEpisode:
    text = ("id", "domain", "intent", "response", "outcome", "polarity", "reference", "stance")
    if any(not isinstance(obj.get(k), str) or not obj[k].strip() for k in text):
        raise InvalidInput(f"{where}: {', '.join(text)} must be non-empty strings.")
    rewards = obj.get("rewards")
    if (
        not isinstance(rewards, list)
        or not rewards
        or not all(
            isinstance(r, int | float) and not isinstance(r, bool) and -1 <= r <= 1 for r in rewards
        )
    ):
        raise InvalidInput(f"{where}: rewards must be a non-empty list of numbers in [-1, 1].")
    if obj["stance"] not in STANCES or stance_of(obj["reference"]) != obj["stance"]:
        raise InvalidInput(f"{where}: stance must be {STANCES} and match the reference's.")
    return ReferenceEpisode(**{k: obj[k] for k in text}, rewards=tuple(map(float, rewards)))


def write_lessons(
    write: Callable[[LessonEvidence], str], episodes: Sequence[ReferenceEpisode]
) -> tuple[dict[str, str], dict[str, str]]:
    """Each episode's lesson by ``write``, and why it failed where it did."""
    lessons, failures = {}, {}
    for episode in episodes:
        try:
            lessons[episode.id] = write(episode.evidence())
        except LessonWriterError as exc:
            failures[episode.id] = str(exc)[:500]
    return lessons, failures


def score_writer(
    writer: str,
    episodes: Sequence[ReferenceEpisode],
    lessons: dict[str, str],
    failures: dict[str, str] | None = None,
    model: str | None = None,
) -> WriterScore:
    """Score ``lessons`` (episode id -> lesson) against the references."""
    from rouge_score import rouge_scorer

    from packs.embeddings import default_embedder

    rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    given = [e for e in episodes if e.id in lessons]
    texts = [e.reference for e in given] + [lessons[e.id] for e in given]
    vectors = default_embedder().embed(texts).astype(np.float64) if texts else np.zeros((0, 1))
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    cosines = {e.id: float(vectors[i] @ vectors[i + len(given)]) for i, e in enumerate(given)}
    scored = []
    for e in episodes:
        lesson = lessons.get(e.id)
        if lesson is None:
            why = (failures or {}).get(e.id, "no lesson")
            scored.append(LessonScore(e.id, None, 0.0, 0.0, False, 0.0, why))
            continue
        rouge_l = rouge.score(e.reference, lesson)["rougeL"].fmeasure
        agrees = stance_of(lesson) == e.stance
        scored.append(
            LessonScore(e.id, lesson, rouge_l, cosines[e.id], agrees, rouge_l if agrees else 0.0)
        )
    by_domain: dict[str, list[float]] = {}
    for e, s in zip(episodes, scored, strict=True):
        by_domain.setdefault(e.domain, []).append(s.score)
    return WriterScore(
        writer=writer,
        model=model,
        episodes=len(episodes),
        written=len(given),
        score=_mean([s.score for s in scored]),
        rouge_l=_mean([s.rouge_l for s in scored]),
        cosine=_mean([s.cosine for s in scored]),
        stance_agreement=_mean([float(s.stance_ok) for s in scored]),
        per_domain={d: _mean(v) for d, v in sorted(by_domain.items())},
        lessons=tuple(scored),
    )


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def render_markdown(result: WriterScore) -> str:
    model = f" ({result.model})" if result.model else ""
    lines = [
        f"# Lesson writer `{result.writer}`{model}: {result.episodes} reference episodes",
        "",
        f"score **{result.score:.3f}** (ROUGE-L F1 where the stance agrees, else 0), "
        f"ROUGE-L {result.rouge_l:.3f}, embedding cosine {result.cosine:.3f}, stance "
        f"agreement {result.stance_agreement:.3f}; lessons written {result.written} of "
        f"{result.episodes}.",
        "",
        "| domain | score |",
        "|---|---|",
        *(f"| {d} | {v:.3f} |" for d, v in result.per_domain.items()),
        "",
        "| episode | score | ROUGE-L | cosine | stance | lesson |",
        "|---|---|---|---|---|---|",
    ]
    for s in result.lessons:
        shown = (s.lesson or f"(none: {s.error})").replace("|", "\\|")
        lines.append(
            f"| {s.id} | {s.score:.3f} | {s.rouge_l:.3f} | {s.cosine:.3f} "
            f"| {'ok' if s.stance_ok else 'WRONG'} | {shown} |"
        )
    return "\n".join(lines) + "\n"


def save(result: WriterScore, out: Path) -> list[Path]:
    """Write ``lesson-scores-<writer>.json`` and ``.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"lesson-scores-{re.sub(r'[^A-Za-z0-9_.-]', '_', result.writer)}"
    paths = [stem.with_suffix(".json"), stem.with_suffix(".md")]
    paths[0].write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    paths[1].write_text(render_markdown(result), encoding="utf-8")
    return paths


def summary(result: WriterScore) -> dict[str, Any]:
    """The headline figures, without the per-lesson rows."""
    return {k: v for k, v in asdict(result).items() if k != "lessons"}
