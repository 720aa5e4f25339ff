"""ragas' non-LLM context metrics as typed results.

Four metrics from the *old* ``ragas.metrics`` module (the new ``ragas.metrics.collections``
classes have no non-LLM versions, docs/field-notes.md), each computed per sample with
``single_turn_score`` and averaged:

- ``non_llm_context_precision``: average precision of the retrieved texts, a retrieved
  text counting as relevant when its string similarity (rapidfuzz Levenshtein, ragas'
  default) to some reference context is at least 0.5;
- ``non_llm_context_recall``: the share of reference contexts matched by a retrieved text;
- ``id_context_precision`` / ``id_context_recall``: the same with ids, as sets.

No LLM and no network: the metrics are always named explicitly (``ragas.evaluate`` with
no metrics would call OpenAI) and ragas telemetry is switched off before ragas is
imported. A sample that retrieved nothing scores 0.0 without calling ragas, whose
metrics assert on empty lists.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evals.metrics import MetricResult, RunContext


@dataclass(frozen=True)
class ContextSample:
    """One query's retrieved contexts (best first) and its references."""

    retrieved_ids: tuple[str, ...]
    retrieved_texts: tuple[str, ...]
    reference_ids: tuple[str, ...] = ()
    reference_texts: tuple[str, ...] = ()


def _ragas_metrics() -> dict[str, tuple[Any, str]]:
    """Metric name -> (ragas metric, which references it needs: "texts" or "ids")."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    with warnings.catch_warnings():
        # ragas 0.4 deprecates these imports in favour of ragas.metrics.collections, whose
        # classes ragas.evaluate refuses and which have no non-LLM versions (docs/field-notes.md).
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.metrics import (
            IDBasedContextPrecision,
            IDBasedContextRecall,
            NonLLMContextPrecisionWithReference,
            NonLLMContextRecall,
        )

    return {
        "non_llm_context_precision": (NonLLMContextPrecisionWithReference(), "texts"),
        "non_llm_context_recall": (NonLLMContextRecall(), "texts"),
        "id_context_precision": (IDBasedContextPrecision(), "ids"),
        "id_context_recall": (IDBasedContextRecall(), "ids"),
    }


def _scorer(metric: Any) -> Callable[[ContextSample], float]:
    from ragas import SingleTurnSample

    def score(sample: ContextSample) -> float:
        if not sample.retrieved_ids:
            return 0.0
        turn = SingleTurnSample(
            user_input="",
            retrieved_contexts=list(sample.retrieved_texts),
            reference_contexts=list(sample.reference_texts),
            retrieved_context_ids=list(sample.retrieved_ids),
            reference_context_ids=list(sample.reference_ids),
        )
        return float(metric.single_turn_score(turn))

    return score


def context_results(
    samples: Sequence[ContextSample], k: int | None, context: RunContext
) -> list[MetricResult]:
    """The four ragas non-LLM context metrics, each averaged over the samples that have
    the references it needs (reference texts, or reference ids). A metric with no such
    sample is left out. ``k`` is how many contexts each sample retrieved at most."""
    results = []
    for name, (metric, needs) in _ragas_metrics().items():
        usable = [
            s for s in samples if (s.reference_texts if needs == "texts" else s.reference_ids)
        ]
        if not usable:
            continue
        score = _scorer(metric)
        value = sum(score(s) for s in usable) / len(usable)
        results.append(context.result(name, value, k, True, len(usable)))
    return results
