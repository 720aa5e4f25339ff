"""The vector index maintenance builds (packs/store/maintenance.py), searched through
Pack.search with the in-memory vector cache standing aside, as above MAX_CACHED_ROWS.

At a few thousand rows: maintenance builds the index; Phase A's candidates through it
agree with LanceDB's exact (flat) search; rows added after the index are found at once
(LanceDB searches the un-indexed tail flat beside the index); the same on moto S3.
"""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.recall.candidates import RecallQuery
from packs.recall.phases import CANDIDATE_COLUMNS, phase_a
from packs.store import maintenance, schemas
from packs.store.gateway import VECTOR_COLUMN
from packs.store.scopes import visible_clause
from tests.support.internals import services_of, without_vector_cache
from tests.support.lance import lance_table
from tests.support.storage import storage_of

DIM = 32
ROWS = 3_000
THRESHOLD = 2_000
SETTINGS = {"delta": -1.0, "k1": 10, "k2": 10}  # no similarity floor: whole top-k1 compared
QUERIES = [f"question {i}" for i in range(40)]


@pytest.fixture(autouse=True)
def partitions(monkeypatch):
    """30 IVF partitions of 100 rows (a real Pack: 250 of 4,000 at 1M), so LanceDB's 20
    probes leave some out, as they do at scale."""
    monkeypatch.setattr(maintenance, "ROWS_PER_PARTITION", 100)


class ClusteredEmbedder(EmbeddingProvider):
    """Deterministic and fast: a text's seeded Gaussian vector pulled towards one of 20
    centres (by the same seed), so the IVF partitions mean something, as with real
    embeddings."""

    info = EmbeddingInfo("clustered", "clustered", "test:clustered", DIM)
    centres = np.random.default_rng(0).standard_normal((20, DIM))

    def _embed_batch(self, texts: list[str]) -> Vectors:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rng = np.random.default_rng(seed)
            rows.append(2.0 * self.centres[seed % 20] + rng.standard_normal(DIM))
        matrix = np.array(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def chunks(count: int, source: str) -> list[KnowledgeChunk]:
    return [KnowledgeChunk(f"chunk {i} of {source}", source, i) for i in range(count)]


def open_pack(root: object, **kwargs: object) -> Pack:
    pack = Pack.open("ann", root, embedder=ClusteredEmbedder(), settings=SETTINGS, **kwargs)  # type: ignore[arg-type]
    without_vector_cache(pack)  # the cache stands aside, as above MAX_CACHED_ROWS
    return pack


def indexed_pack(root: object, **kwargs: object) -> Pack:
    pack = open_pack(root, **kwargs)
    pack.add_knowledge(chunks(ROWS, "base.md"))
    report = pack.upkeep.maintain(retention=timedelta(0), index_threshold=THRESHOLD)
    assert "memories.intent_embedding (ivf_sq, cosine)" in report.indexes_built
    assert VECTOR_COLUMN in storage_of(pack).indexed_columns(schemas.MEMORIES)
    return pack


def candidates(pack: Pack, text: str, exact: bool = False) -> list[str]:
    """Phase A's top-k1 as Pack.search finds it, or LanceDB's flat search (the truth)."""
    vector = ClusteredEmbedder().embed([text])[0]
    if exact:
        limit = pack.settings.ranking.k1
        hits = storage_of(pack).search(schemas.MEMORIES, vector, ["id"], limit=limit, exact=True)
        return list(hits["id"].to_pylist())
    clause, cache = visible_clause(None), services_of(pack).recall.vectors
    found = phase_a(
        storage_of(pack), RecallQuery(vector, pack.settings.ranking.k1, -1.0, clause), cache
    )
    assert not cache.sync(storage_of(pack), schemas.MEMORIES, CANDIDATE_COLUMNS)  # it stood aside
    return found.ids


def recall_at_k1(pack: Pack) -> float:
    shares = []
    for query in QUERIES:
        truth = candidates(pack, query, exact=True)
        shares.append(len(set(candidates(pack, query)) & set(truth)) / len(truth))
    return float(np.mean(shares))


def searched_through_index(pack: Pack) -> bool:
    vector = ClusteredEmbedder().embed(["question 0"])[0]
    table = lance_table(pack, schemas.MEMORIES)
    plan = table.search(vector, vector_column_name=VECTOR_COLUMN).distance_type("cosine")
    return "ANNSubIndex" in plan.explain_plan() or "ANNIvf" in plan.explain_plan()


def ivf_partitions(pack: Pack) -> int:
    """Partitions the index ranks for a query (LanceDB's plan metrics)."""
    vector = ClusteredEmbedder().embed(["question 0"])[0]
    table = lance_table(pack, schemas.MEMORIES)
    plan = table.search(vector, vector_column_name=VECTOR_COLUMN).distance_type("cosine")
    return int(re.findall(r"partitions_ranked=(\d+)", plan.analyze_plan())[0])


def late_rows_found_at_once(pack: Pack) -> None:
    late = [KnowledgeChunk(f"late note {i} about release {i * 7}", "late.md", i) for i in range(20)]
    pack.add_knowledge(late)
    assert storage_of(pack).count(schemas.MEMORIES) == ROWS + len(late)
    for chunk in late:
        items = pack.search(chunk.text, k=1).items
        assert items and items[0].text == chunk.text, chunk.text


def test_maintenance_builds_the_index_and_search_agrees_with_exact(tmp_root):
    with indexed_pack(tmp_root) as pack:
        assert searched_through_index(pack)
        # about ROWS / 100: the partitions outlived maintain's optimize() (a num_partitions
        # index was re-partitioned there by LanceDB's default, to 1 at this size)
        assert ivf_partitions(pack) >= 20
        assert recall_at_k1(pack) >= 0.95
        assert pack.search("chunk 17 of base.md", k=1).items[0].text == "chunk 17 of base.md"


def test_rows_added_after_the_index_are_found_at_once(tmp_root):
    with indexed_pack(tmp_root) as pack:
        late_rows_found_at_once(pack)
        assert recall_at_k1(pack) >= 0.95
        pack.upkeep.maintain(retention=timedelta(0), index_threshold=THRESHOLD)  # folds them in
        late_rows_found_at_once(pack)  # the same texts again: no duplicates, still found


def test_a_changed_chunk_is_updated_through_the_id_index(tmp_root):
    """Regression (issue 24): add_knowledge updates a changed chunk by id once maintenance
    built the ``memories.id`` BTREE (LanceDB 0.40 panicked on the conditional merge
    there, which then ran as a scan of the whole table); unchanged chunks write nothing."""
    with indexed_pack(tmp_root) as pack:
        assert "id" in storage_of(pack).indexed_columns(schemas.MEMORIES)
        version = storage_of(pack).latest_version(schemas.MEMORIES)
        ids = pack.add_knowledge(chunks(ROWS, "base.md"))
        assert storage_of(pack).latest_version(schemas.MEMORIES) == version
        pack.add_knowledge([KnowledgeChunk("chunk 7 rewritten about releases", "base.md", 7)])
        assert storage_of(pack).count(schemas.MEMORIES) == ROWS
        assert pack.get(ids[7])["intent_text"] == "chunk 7 rewritten about releases"
        assert pack.search("chunk 7 rewritten about releases", k=1).ids == [ids[7]]


@pytest.mark.s3
def test_on_s3_the_index_is_built_searched_and_kept_current(s3):
    options = s3.storage_options
    with indexed_pack(s3.fresh_root("ann-index"), storage_options=options) as pack:
        assert searched_through_index(pack)
        assert recall_at_k1(pack) >= 0.95
        late_rows_found_at_once(pack)
