"""Scoring an eval set against a Pack: pinned versions, provider checks, bad ids."""

from __future__ import annotations

import json
import shutil

import pytest

from evals.evalset import load_eval_set
from evals.pack_eval import evaluate_pack
from packs import KnowledgeChunk, Pack
from packs.bundles import load_bundle
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors, default_embedder
from packs.errors import EmbeddingMismatch, InvalidInput


@pytest.fixture(scope="module")
def built(rm_mv_slice, tmp_path_factory):
    """The slice embedded once per module; each test gets its own copy."""
    root = tmp_path_factory.mktemp("built")
    with Pack.open("slice", root) as pack:
        load_bundle(pack, rm_mv_slice)
    return root / "slice"


@pytest.fixture
def loaded_pack(built, tmp_path):
    shutil.copytree(built, tmp_path / "slice")
    with Pack.open("slice", tmp_path) as pack:
        yield pack


def test_scores_every_metric_family(loaded_pack, rm_mv_slice):
    scored = evaluate_pack(loaded_pack, load_eval_set(rm_mv_slice / "queries.jsonl"), [1, 3])
    names = {(r.metric, r.k) for r in scored.results}
    assert {("recall", 3), ("ndcg", 1), ("hit_rate", 3), ("mrr", 3)} <= names
    assert {("non_llm_context_precision", 3), ("id_context_recall", 3)} <= names
    assert len(scored.outcomes) == 8 and scored.embedding == "onnx-int8:all-MiniLM-L6-v2"
    assert all(r.pack == "slice" and r.pack_version == scored.pack_version for r in scored.results)


def test_a_pinned_version_ignores_later_writes(loaded_pack, rm_mv_slice):
    eval_set = load_eval_set(rm_mv_slice / "queries.jsonl")
    before = evaluate_pack(loaded_pack, eval_set, [3], ragas=False)
    # a chunk that answers every query better than the man pages would
    queries = " ".join(q.query for q in eval_set.queries)
    loaded_pack.add_knowledge([KnowledgeChunk(queries, "distractor.md", 0)])
    latest = evaluate_pack(loaded_pack, eval_set, [3], ragas=False)
    again = evaluate_pack(loaded_pack, eval_set, [3], version=before.pack_version, ragas=False)
    assert latest.pack_version > before.pack_version
    assert [o.ranked for o in again.outcomes] == [o.ranked for o in before.outcomes]
    assert [o.ranked for o in latest.outcomes] != [o.ranked for o in before.outcomes]
    with pytest.raises(InvalidInput, match="has no memories version 999"):
        evaluate_pack(loaded_pack, eval_set, [3], version=999)


class RenamedProvider(EmbeddingProvider):
    """The default model under another provider name: same vector space."""

    def __init__(self) -> None:
        inner = default_embedder()
        self.info = EmbeddingInfo("st-fp32", inner.info.model, inner.info.space, inner.info.dim)
        self.inner = inner

    def _embed_batch(self, texts: list[str]) -> Vectors:
        return self.inner.embed(texts)


def test_a_pack_built_with_another_provider_is_refused(tmp_path, rm_mv_slice):
    with Pack.open("other", tmp_path, embedder=RenamedProvider()) as pack:
        pack.add_knowledge([KnowledgeChunk("mv - move (rename) files", "man/mv.1", 0)])
    eval_set = load_eval_set(rm_mv_slice / "queries.jsonl")
    with (
        Pack.open("other", tmp_path, read_only=True) as pack,  # same space: it opens
        pytest.raises(EmbeddingMismatch, match=r"built with st-fp32:all-MiniLM-L6-v2"),
    ):
        evaluate_pack(pack, eval_set, [3])


def test_ids_the_pack_does_not_hold_are_refused_before_scoring(loaded_pack, tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"query": "copy a tree", "relevant": ["man/cp.1#18"]}) + "\n")
    with pytest.raises(InvalidInput, match=r"line 1 \(line-1\): \['man/cp.1#18'\]"):
        evaluate_pack(loaded_pack, load_eval_set(path), [3])
