"""Score an eval set against a Pack pinned to one LanceDB version (no Prefect here).

``evaluate_pack`` ranks every query the way the Pack would (``Pack.search``: the same
Phase A and Phase B as ``recall``, nothing logged) against the ``memories`` table
checked out at one version, so a run is reproducible and its version is recorded. It
returns typed results: retrieval metrics at each cutoff (``evals.metrics``) and ragas'
non-LLM context metrics over the top-k2 that a recall would inject
(``evals.context_metrics``).

A Pack whose stored embedding provider differs from the one that embeds the queries is
refused: scores from mixed providers are not comparable over time, even within one
vector space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from evals.context_metrics import ContextSample, context_results
from evals.evalset import EvalSet, check_known_ids, resolve_eval_set, row_id
from evals.metrics import MetricResult, RankedQuery, RunContext, retrieval_results
from packs.embeddings import EmbeddingInfo
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import EmbeddingMismatch, InvalidInput
from packs.pack import Pack

DEFAULT_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class QueryOutcome:
    id: str
    query: str
    ranked: tuple[str, ...]  # row ids, best first
    relevant: tuple[str, ...]  # row ids

    @property
    def hit(self) -> bool:
        return bool(set(self.ranked) & set(self.relevant))


@dataclass(frozen=True)
class PackEval:
    results: list[MetricResult]
    outcomes: list[QueryOutcome]
    pack_version: int
    settings_version: int
    embedding: str  # "provider:model"


def check_embedding(pack: Pack, queries_by: EmbeddingInfo | None = None) -> None:
    """Refuse a Pack built with another embedding provider than the one used here."""
    used = queries_by or OnnxMiniLM.info
    stored = pack.embedding
    if (stored.provider, stored.model, stored.space, stored.dim) != (
        used.provider,
        used.model,
        used.space,
        used.dim,
    ):
        raise EmbeddingMismatch(
            f"Pack {pack.name!r} was built with {stored.provider}:{stored.model} (dim "
            f"{stored.dim}), but this eval embeds queries with {used.provider}:{used.model} "
            f"(dim {used.dim}). Evaluate with the provider the Pack was built with "
            "(Pack.open(..., embedder=...) and evaluate_pack), or rebuild the Pack."
        )


def pin(pack: Pack, version: int | None = None) -> int:
    """Check the ``memories`` table out at ``version`` (default: the latest) and return
    it. Every later read through this handle sees that version."""
    return pack.eval_sets.pin(version)


def evaluate_pack(
    pack: Pack,
    eval_set: EvalSet,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    version: int | None = None,
    ragas: bool = True,
    queries_by: EmbeddingInfo | None = None,
) -> PackEval:
    """Score ``eval_set`` against ``pack`` at ``version``; see the module docstring."""
    check_embedding(pack, queries_by)
    pinned = pin(pack, version)
    ids = pack.query("items", columns=["id"], version=pinned)["id"].to_list()
    check_known_ids(eval_set, ids, f"Pack {pack.name!r} (version {pinned})")
    if any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks) or not ks:
        raise InvalidInput(f"Cutoffs must be positive ints, got {list(ks)!r}.")
    depth, k2 = max(ks), pack.settings.ranking.k2
    context = RunContext(eval_set.name, pack.name, pinned, datetime.now(UTC))
    outcomes, samples, ranked_queries = [], [], []
    texts = _reference_texts(pack, eval_set, pinned) if ragas else {}
    for q in eval_set.queries:
        items = pack.search(q.query, depth).items
        relevant = tuple(row_id(ref) for ref in q.relevant)
        outcome = QueryOutcome(q.id, q.query, tuple(i.id for i in items), relevant)
        outcomes.append(outcome)
        if q.relevant:
            grades = {row_id(ref): grade for ref, grade in q.relevant.items()}
            ranked_queries.append(RankedQuery(outcome.ranked, grades))
        top = items[:k2]
        references = q.reference_contexts or tuple(texts[i] for i in relevant if i in texts)
        samples.append(
            ContextSample(
                tuple(i.id for i in top), tuple(i.text for i in top), relevant, references
            )
        )
    results = retrieval_results(ranked_queries, ks, context) if ranked_queries else []
    if ragas:
        results += context_results(samples, k2, context)
    info = pack.embedding
    return PackEval(
        results, outcomes, pinned, pack.settings_version, f"{info.provider}:{info.model}"
    )


@dataclass(frozen=True)
class ScoredEvalSet:
    """An eval set scored against a Pack: what the eval flow stores and publishes."""

    dataset: str
    dataset_digest: str
    results: tuple[MetricResult, ...]
    misses: tuple[QueryOutcome, ...]  # queries with no relevant item retrieved
    queries: int
    pack_version: int
    settings_version: int
    embedding: str  # "provider:model"


def pin_checked(pack: Pack, version: int | None = None) -> int:
    """:func:`pin` after :func:`check_embedding`: the version to score, refusing a Pack
    built with another embedder before any work."""
    check_embedding(pack)
    return pin(pack, version)


def score_eval_set(
    pack: Pack, spec: str | None, ks: Sequence[int], *, version: int, ragas: bool
) -> ScoredEvalSet:
    """Score the eval set ``spec`` (a JSONL file, or a set stored with the Pack: by name,
    or its only one when None) against the Pack checked out at ``version``."""
    loaded = resolve_eval_set(pack, spec)
    scored = evaluate_pack(pack, loaded, ks, version=version, ragas=ragas)
    return ScoredEvalSet(
        loaded.name,
        loaded.digest,
        tuple(scored.results),
        tuple(o for o in scored.outcomes if not o.hit),
        len(scored.outcomes),
        scored.pack_version,
        scored.settings_version,
        scored.embedding,
    )


def _reference_texts(pack: Pack, eval_set: EvalSet, version: int) -> dict[str, str]:
    """Texts of every relevant row, for the ragas text metrics when the eval set gives
    ids but no reference contexts."""
    wanted = sorted({row_id(ref) for q in eval_set.queries for ref in q.relevant})
    if not wanted:
        return {}
    rows = pack.query("items", {"id": wanted}, ["id", "intent_text"], version=version).to_dicts()
    return {row["id"]: row["intent_text"] for row in rows}
