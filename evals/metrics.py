"""Typed eval results, and the retrieval metrics behind most of them.

Every score an eval produces is a :class:`MetricResult`: the metric, its value, the
cutoff ``k``, which direction is better, and what was measured (dataset, Pack, Pack
version, time). The eval flow stores them in the Pack's ``eval_runs`` table.

The retrieval metrics are small exact implementations over ranked id lists. They follow
trec_eval's definitions and are checked against ``pytrec_eval`` (trec_eval's Python
binding) in ``tests/evals/test_metrics.py``:

- ``recall@k = |R ∩ top_k| / |R|``
- ``precision@k = |R ∩ top_k| / k`` (divided by k even when fewer items came back)
- ``MRR = 1 / rank of the first relevant item``, 0 when none came back
- ``nDCG@k = DCG@k / IDCG@k`` with ``DCG = Σ gain_i / log2(i + 1)`` and linear gains
  (the graded relevance itself), as trec_eval's ``ndcg_cut``
- ``hit rate@k = 1`` when any relevant item is in the top k (trec_eval's ``success``)

``R`` holds the ids with a grade of at least 1. Each is averaged over the queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from packs.errors import InvalidInput

Relevance = Mapping[str, int]  # item id -> graded relevance; >= 1 is relevant


@dataclass(frozen=True)
class MetricResult:
    """One typed score. ``queries`` is how many queries or samples it averages."""

    metric: str
    value: float
    k: int | None
    higher_is_better: bool
    dataset: str
    pack: str | None
    pack_version: int | None
    at: datetime
    queries: int


@dataclass(frozen=True)
class RunContext:
    """What is being measured; every result of one run shares it."""

    dataset: str
    pack: str | None = None
    pack_version: int | None = None
    at: datetime | None = None

    def result(
        self, metric: str, value: float, k: int | None, higher_is_better: bool, queries: int
    ) -> MetricResult:
        return MetricResult(
            metric,
            float(value),
            k,
            higher_is_better,
            self.dataset,
            self.pack,
            self.pack_version,
            self.at or datetime.now(UTC),
            queries,
        )


def _top(ranked: Sequence[str], k: int) -> list[str]:
    """The first ``k`` distinct ids: a repeated id counts once, at its best rank."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k must be a positive int, got {k!r}.")
    return list(dict.fromkeys(ranked))[:k]


def _relevant(relevance: Relevance) -> set[str]:
    return {item for item, grade in relevance.items() if grade >= 1}


def recall_at_k(ranked: Sequence[str], relevance: Relevance, k: int) -> float:
    """``|R ∩ top_k| / |R|``; 0.0 when the query has no relevant item."""
    relevant = _relevant(relevance)
    if not relevant:
        return 0.0
    return len(relevant.intersection(_top(ranked, k))) / len(relevant)


def precision_at_k(ranked: Sequence[str], relevance: Relevance, k: int) -> float:
    """``|R ∩ top_k| / k`` (trec_eval's P_k divides by k even for shorter lists)."""
    return len(_relevant(relevance).intersection(_top(ranked, k))) / k


def hit_at_k(ranked: Sequence[str], relevance: Relevance, k: int) -> float:
    """1.0 when any relevant item is in the top k, else 0.0."""
    return 1.0 if _relevant(relevance).intersection(_top(ranked, k)) else 0.0


def reciprocal_rank(ranked: Sequence[str], relevance: Relevance) -> float:
    """``1 / rank`` of the first relevant item in ``ranked``; 0.0 when there is none."""
    relevant = _relevant(relevance)
    for rank, item in enumerate(dict.fromkeys(ranked), start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevance: Relevance, k: int) -> float:
    """``DCG@k / IDCG@k`` with linear gains; 0.0 when the query has no relevant item."""
    gains = [max(0, relevance.get(item, 0)) for item in _top(ranked, k)]
    ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return 0.0
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains)) / idcg


@dataclass(frozen=True)
class RankedQuery:
    """What one query retrieved (best first) and its graded relevance."""

    ranked: tuple[str, ...]
    relevance: Mapping[str, int]


def retrieval_results(
    queries: Sequence[RankedQuery], ks: Sequence[int], context: RunContext
) -> list[MetricResult]:
    """Recall, precision, nDCG and hit rate at each k, and MRR over the retrieved list.

    MRR is reported with ``k`` = the largest cutoff, the depth that was retrieved.
    """
    if not queries:
        raise InvalidInput("No queries with relevant ids to score; check the eval set.")
    if not ks:
        raise InvalidInput("Give at least one cutoff k.")
    n = len(queries)
    results = []
    for k in sorted(set(ks)):
        for name, fn in (
            ("recall", recall_at_k),
            ("precision", precision_at_k),
            ("ndcg", ndcg_at_k),
            ("hit_rate", hit_at_k),
        ):
            value = sum(fn(q.ranked, q.relevance, k) for q in queries) / n
            results.append(context.result(name, value, k, True, n))
    mrr = sum(reciprocal_rank(q.ranked, q.relevance) for q in queries) / n
    results.append(context.result("mrr", mrr, max(ks), True, n))
    return results


def merge_results(
    labels: Sequence[int], similarities: Sequence[float], threshold: float, context: RunContext
) -> list[MetricResult]:
    """Dedup merge precision and recall at ``threshold`` (``evals.dedup`` computes them).

    The threshold is part of the metric name (``merge_precision@0.89``): scores at two
    thresholds are different metrics.
    """
    from evals.dedup import merge_precision_recall

    score = merge_precision_recall(labels, similarities, threshold)
    n = len(labels)
    return [
        context.result(f"merge_precision@{threshold:g}", score.precision, None, True, n),
        context.result(f"merge_recall@{threshold:g}", score.recall, None, True, n),
    ]
