"""Typed metrics: retrieval metrics against trec_eval (pytrec_eval) and by hand, ragas'
non-LLM context metrics, WER and dedup merge precision/recall on fixed examples."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.metrics import (
    MetricResult,
    RankedQuery,
    RunContext,
    hit_at_k,
    merge_results,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    retrieval_results,
)
from evals.transcript_metrics import wer_result, word_error_rate
from packs.errors import InvalidInput

CONTEXT = RunContext("fixed", "pack-a", 7, datetime(2026, 11, 1, tzinfo=UTC))
RANKED = ["a", "x", "b", "y"]
RELEVANCE = {"a": 1, "b": 2, "c": 1}


def test_retrieval_metrics_by_hand():
    assert recall_at_k(RANKED, RELEVANCE, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, RELEVANCE, 4) == pytest.approx(2 / 3)
    assert precision_at_k(RANKED, RELEVANCE, 2) == pytest.approx(1 / 2)
    assert precision_at_k(RANKED, RELEVANCE, 10) == pytest.approx(2 / 10)  # divided by k
    assert hit_at_k(["x", "y", "a"], RELEVANCE, 2) == 0.0
    assert hit_at_k(["x", "y", "a"], RELEVANCE, 3) == 1.0
    assert reciprocal_rank(["x", "y", "b"], RELEVANCE) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], RELEVANCE) == 0.0
    # DCG@3 = 1/log2(2) + 0 + 2/log2(4) = 2; IDCG@3 = 2 + 1/log2(3) + 1/log2(4)
    assert ndcg_at_k(RANKED, RELEVANCE, 3) == pytest.approx(2 / (2 + 1 / math.log2(3) + 0.5))


def test_repeated_ids_count_once_and_bad_k_is_refused():
    assert precision_at_k(["a", "a", "b"], RELEVANCE, 2) == pytest.approx(1.0)
    assert recall_at_k(["x"], {}, 3) == 0.0 and ndcg_at_k(["x"], {}, 3) == 0.0
    with pytest.raises(InvalidInput, match="k must be a positive int"):
        recall_at_k(RANKED, RELEVANCE, 0)


def test_retrieval_results_are_typed_and_averaged():
    queries = [RankedQuery(("a", "x"), {"a": 1}), RankedQuery(("x", "y"), {"a": 1})]
    results = retrieval_results(queries, [1, 2], CONTEXT)
    by_name = {(r.metric, r.k): r for r in results}
    assert by_name[("hit_rate", 1)].value == pytest.approx(0.5)
    assert by_name[("mrr", 2)].value == pytest.approx(0.5)
    result = by_name[("recall", 2)]
    assert isinstance(result, MetricResult)
    assert (result.dataset, result.pack, result.pack_version, result.queries) == (
        "fixed",
        "pack-a",
        7,
        2,
    )
    assert result.higher_is_better and result.at == CONTEXT.at
    with pytest.raises(InvalidInput, match="No queries"):
        retrieval_results([], [1], CONTEXT)


def _trec(ranked: list[str], relevance: dict[str, int], k: int) -> dict[str, float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    # Strictly decreasing scores: trec_eval sorts by score, so the order is ours.
    run = {"q": {item: float(len(ranked) - i) for i, item in enumerate(ranked)}}
    measures = {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", f"success.{k}", "recip_rank"}
    return pytrec_eval.RelevanceEvaluator({"q": relevance}, measures).evaluate(run)["q"]


ids = st.sampled_from([f"d{i}" for i in range(12)])


@settings(max_examples=150, deadline=None)
@given(
    ranked=st.lists(ids, min_size=1, max_size=10, unique=True),
    relevance=st.dictionaries(ids, st.integers(1, 3), min_size=1, max_size=6),
    k=st.integers(1, 10),
)
def test_retrieval_metrics_agree_with_trec_eval(ranked, relevance, k):
    reference = _trec(ranked, relevance, k)
    assert precision_at_k(ranked, relevance, k) == pytest.approx(reference[f"P_{k}"])
    assert recall_at_k(ranked, relevance, k) == pytest.approx(reference[f"recall_{k}"])
    assert ndcg_at_k(ranked, relevance, k) == pytest.approx(reference[f"ndcg_cut_{k}"])
    assert hit_at_k(ranked, relevance, k) == pytest.approx(reference[f"success_{k}"])
    assert reciprocal_rank(ranked, relevance) == pytest.approx(reference["recip_rank"])


def test_ragas_non_llm_context_metrics_by_hand():
    from evals.context_metrics import ContextSample, context_results

    cat, dog = "The cat sat on the mat.", "Dogs bark loudly at night."
    samples = [
        # retrieved: the reference text, then an unrelated one -> AP 1.0, recall 1.0
        ContextSample(("a", "b"), (cat, dog), ("a", "c"), (cat,)),
        # nothing retrieved -> 0 for every metric, without calling ragas
        ContextSample((), (), ("a",), (cat,)),
    ]
    results = {r.metric: r for r in context_results(samples, 2, CONTEXT)}
    assert results["non_llm_context_precision"].value == pytest.approx(0.5, abs=1e-6)
    assert results["non_llm_context_recall"].value == pytest.approx(0.5)
    assert results["id_context_precision"].value == pytest.approx(0.25)  # (1/2 + 0) / 2
    assert results["id_context_recall"].value == pytest.approx(0.25)
    assert all(r.k == 2 and r.queries == 2 for r in results.values())


def test_ragas_metrics_skip_samples_without_the_references_they_need():
    from evals.context_metrics import ContextSample, context_results

    only_ids = [ContextSample(("a",), ("some text",), ("a",), ())]
    names = {r.metric for r in context_results(only_ids, 1, CONTEXT)}
    assert names == {"id_context_precision", "id_context_recall"}


def test_word_error_rate_normalises_case_and_punctuation():
    assert word_error_rate(["Hello, world! How are you?"], ["hello world how are you"]) == 0.0
    # one insertion against three reference words, then one deletion of two: 2 / 5
    assert word_error_rate(["the cat sat", "a b"], ["the cat sat on", "a"]) == pytest.approx(0.4)
    result = wer_result(["the cat sat"], ["the cat sat on"], CONTEXT)
    assert result.metric == "wer" and not result.higher_is_better
    assert result.value == pytest.approx(1 / 3)


def test_word_error_rate_refuses_bad_input():
    with pytest.raises(InvalidInput, match="one hypothesis per reference"):
        word_error_rate(["a"], [])
    with pytest.raises(InvalidInput, match="empty"):
        word_error_rate([" "], ["a"])


def test_merge_precision_recall_comes_from_the_dedup_eval():
    # merged at 0.9: pairs 0 and 2; true merges: pairs 0 and 1 -> tp 1, fp 1, fn 1
    results = merge_results([1, 1, 0, 0], [0.95, 0.5, 0.92, 0.1], 0.9, CONTEXT)
    values = {r.metric: r.value for r in results}
    assert values == {"merge_precision@0.9": 0.5, "merge_recall@0.9": 0.5}
