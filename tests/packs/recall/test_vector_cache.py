"""The in-memory vector cache behind Phase A (packs/recall/vector_cache.py).

Every test compares with LanceDB's own exact (flat) search on the same table, or with
what another handle just wrote: the cache must never answer from a stale table.
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pytest

from packs import KnowledgeChunk, Pack
from packs.embeddings.cache import QueryEmbeddingCache
from packs.recall.candidates import RecallQuery
from packs.recall.phases import CANDIDATE_COLUMNS, phase_a
from packs.store import schemas
from packs.store.scopes import visible_clause
from tests.support.internals import services_of
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

DIM = 32
OPEN_ALL = {"delta": -1.0, "k1": 10, "k2": 3}  # no similarity floor: compare whole top-k1


def chunks(count: int, source: str = "doc.md", start: int = 0) -> list[KnowledgeChunk]:
    return [
        KnowledgeChunk(f"chunk {i} of {source}", source, i, title=f"part {i % 7}")
        for i in range(start, start + count)
    ]


def open_pack(root: object, **kwargs: object) -> Pack:
    return Pack.open("cache", root, embedder=SeededEmbedder(), settings=OPEN_ALL, **kwargs)  # type: ignore[arg-type]


@pytest.mark.s3
def test_on_s3_rows_written_by_another_handle_are_found_at_once(s3):
    """No _versions folder to stat on S3: every search checks the version."""
    root, options = s3.fresh_root("vector-cache"), s3.storage_options
    with open_pack(root, storage_options=options) as pack:
        pack.add_knowledge(chunks(50))
        assert pack.search("chunk 7 of doc.md").items[0].text == "chunk 7 of doc.md"
        with open_pack(root, storage_options=options) as other:
            other.add_knowledge([KnowledgeChunk("stored from elsewhere", "s3.md", 0)])
        assert pack.search("stored from elsewhere").items[0].source == "s3.md"
        assert cached(pack, "chunk 9 of doc.md")[0] == exact(pack, "chunk 9 of doc.md")[0]


@pytest.fixture
def pack(tmp_root):
    with open_pack(tmp_root) as handle:
        handle.add_knowledge(chunks(600, "a.md") + chunks(600, "b.md"))
        cache = services_of(handle).recall.vectors
        cache.defer = 0  # the cache from the first search (deferral has its test)
        yield handle


def exact(pack: Pack, text: str, clause: str | None = None) -> tuple[list[str], np.ndarray]:
    """LanceDB's flat search (exact without an index): the reference."""
    vector = SeededEmbedder().embed([text])[0]
    storage_of(pack).latest_version(schemas.MEMORIES)
    r = pack.settings.ranking
    found = phase_a(storage_of(pack), RecallQuery(vector, r.k1, r.delta, clause))
    return found.ids, found.similarity


def cached(pack: Pack, text: str, clause: str | None = None) -> tuple[list[str], np.ndarray]:
    """The cache's own top-k1 (no LanceDB fallback can hide a stale entry)."""
    vector = SeededEmbedder().embed([text])[0]
    cache, store = services_of(pack).recall.vectors, storage_of(pack)
    cache.defer = 0
    assert cache.sync(store, schemas.MEMORIES, CANDIDATE_COLUMNS)
    mask = cache.allowed(store, schemas.MEMORIES, clause) if clause else None
    hits = cache.top_k(vector, pack.settings.ranking.k1, mask)
    return cache.ids(hits.positions), hits.similarity


def top_ids(pack: Pack, text: str, **kwargs: object) -> list[str]:
    return [item.id for item in pack.search(text, k=10, **kwargs).items]  # type: ignore[arg-type]


def test_cache_equals_lancedb_exact_search(pack):
    for i in range(25):
        query = f"query number {i}"
        ids, similarity = cached(pack, query)
        ref_ids, ref_similarity = exact(pack, query)
        assert ids == ref_ids
        assert similarity == pytest.approx(ref_similarity, abs=1e-5)
    assert services_of(pack).recall.vectors.rows == 1200


def test_candidate_columns_are_the_rows_own(pack):
    """Columns are read by row id; a mix-up would pair a text with another row's vector."""
    recall = pack.search("chunk 17 of a.md")
    assert recall.items[0].text == "chunk 17 of a.md"
    assert recall.items[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_row_added_by_another_handle_is_found_at_once(pack, tmp_root):
    assert pack.search("anything").items  # the cache is warm
    with open_pack(tmp_root) as other:
        other.add_knowledge([KnowledgeChunk("a brand new chunk", "new.md", 0)])
    recall = pack.search("a brand new chunk")
    assert recall.items[0].text == "a brand new chunk"
    assert cached(pack, "a brand new chunk")[0] == exact(pack, "a brand new chunk")[0]


def test_utility_updated_elsewhere_is_not_served_stale(pack, tmp_root):
    first = pack.search("chunk 3 of b.md").items[0]
    assert first.track_record == 0.0
    with open_pack(tmp_root) as other:
        full = schemas.memories_schema(DIM)
        row = pa.table(
            {"id": [first.id], "utility": [0.75]},
            schema=pa.schema([full.field("id"), full.field("utility")]),
        )
        storage_of(other).merge(schemas.MEMORIES, row, "id", update=True, insert=False)
    items = pack.search("chunk 3 of b.md", k=10).items
    assert [i.track_record for i in items if i.id == first.id] == [pytest.approx(0.75)]
    assert cached(pack, "chunk 3 of b.md")[0] == exact(pack, "chunk 3 of b.md")[0]


def test_vector_rewritten_elsewhere_is_not_served_stale(pack, tmp_root):
    """Re-ingesting a changed chunk rewrites its text and vector under the same id."""
    assert pack.search("chunk 5 of a.md").items[0].text == "chunk 5 of a.md"
    with open_pack(tmp_root) as other:
        other.add_knowledge([KnowledgeChunk("rewritten chunk five", "a.md", 5)])
    assert pack.search("rewritten chunk five").items[0].text == "rewritten chunk five"
    assert "chunk 5 of a.md" not in [i.text for i in pack.search("chunk 5 of a.md").items]
    assert cached(pack, "chunk 5 of a.md")[0] == exact(pack, "chunk 5 of a.md")[0]


def test_deleted_rows_are_not_returned(pack, tmp_root):
    assert pack.search("chunk 8 of a.md").items[0].text == "chunk 8 of a.md"
    with open_pack(tmp_root) as other:
        storage_of(other).delete(schemas.MEMORIES, "source = 'a.md' AND source_position < 300")
    texts = [i.text for i in pack.search("chunk 8 of a.md", k=10).items]
    assert "chunk 8 of a.md" not in texts
    assert cached(pack, "chunk 8 of a.md")[0] == exact(pack, "chunk 8 of a.md")[0]
    assert services_of(pack).recall.vectors.rows == 900


def test_compaction_and_own_flushes_keep_results_exact(pack):
    for i in range(40):
        recall = pack.recall(f"question {i}")
        pack.feedback(recall.episode_id or "", 1.0 if i % 2 else -1.0)
    pack.flush()
    storage_of(pack).optimize(schemas.MEMORIES)
    for i in range(10):
        assert cached(pack, f"question {i}")[0] == exact(pack, f"question {i}")[0]
    assert services_of(pack).recall.vectors.rows == 1200


def test_many_rows_moved_elsewhere_are_squeezed_out(pack, tmp_root):
    """Past a quarter of superseded entries the cache rebuilds; filter masks too."""
    clause = f"{visible_clause(None)} AND source = 'a.md'"
    cached(pack, "chunk 40 of a.md", clause)  # a filter mask exists before the rebuild
    with open_pack(tmp_root) as other:
        ids = storage_of(other).scan(schemas.MEMORIES, ["id"])["id"].to_pylist()[:500]
        storage_of(other).increment(schemas.MEMORIES, ids, "usage_count", 2)
    for text in ("chunk 40 of a.md", "chunk 300 of b.md", "chunk 599 of b.md"):
        assert cached(pack, text)[0] == exact(pack, text)[0]
        assert cached(pack, text, clause)[0] == exact(pack, text, clause)[0]
    cache = services_of(pack).recall.vectors
    assert cache.rows == cache._n == 1200  # private: no superseded entry left: the squeeze
    items = pack.search("chunk 40 of a.md", k=10).items
    assert len({item.id for item in items}) == len(items) == 10
    assert items[0].text == "chunk 40 of a.md"
    assert [i.usage_count for i in items if i.id in ids] == [2] * sum(i.id in ids for i in items)


@pytest.mark.parametrize(
    "filters",
    [
        {"where": {"source": "b.md"}},
        {"where": {"title": "part 3"}},
        {"kind": "memory"},
        {"kind": "knowledge", "where": {"source": "a.md"}},
    ],
)
def test_filters_still_apply(pack, filters):
    pack.remember("a memory about chunk 2", "the response")
    items = pack.search("chunk 2 of a.md", k=10, **filters).items
    assert items
    for item in items:
        if "kind" in filters:
            assert item.kind == filters["kind"]
        for column, value in filters.get("where", {}).items():
            assert getattr(item, column) == value


def test_filter_mask_follows_new_rows(pack, tmp_root):
    assert top_ids(pack, "chunk 1 of c.md", where={"source": "c.md"}) == []
    with open_pack(tmp_root) as other:
        other.add_knowledge(chunks(5, "c.md"))
    clause = f"{visible_clause(None)} AND source = 'c.md'"
    assert cached(pack, "chunk 1 of c.md", clause)[0] == exact(pack, "chunk 1 of c.md", clause)[0]
    found = pack.search("chunk 1 of c.md", k=10, where={"source": "c.md"}).items
    assert [item.text for item in found][:1] == ["chunk 1 of c.md"]
    assert len(found) == 5


def test_read_only_handle_searches_and_sees_new_rows(pack, tmp_root):
    reader = Pack.open("cache", tmp_root, read_only=True, embedder=SeededEmbedder())
    assert reader.search("chunk 9 of b.md").items[0].text == "chunk 9 of b.md"
    pack.add_knowledge([KnowledgeChunk("written after the reader opened", "late.md", 0)])
    assert reader.search("written after the reader opened").items[0].source == "late.md"


def test_unchanged_local_table_skips_lancedb_until_a_commit(pack, tmp_root, monkeypatch):
    """The ``_versions`` folder's mtime stands in for the version check only while no
    commit happened; a write by another handle is still found at once."""
    from packs.store import tables

    monkeypatch.setattr(tables, "SETTLE_NS", 50_000_000)
    checks = []
    real = storage_of(pack).latest_version
    monkeypatch.setattr(
        storage_of(pack), "latest_version", lambda name: checks.append(1) or real(name)
    )
    time.sleep(0.1)
    pack.search("first")  # loads the cache
    pack.search("first again")  # checks the version, and records the settled marker
    before = len(checks)
    pack.search("second")
    assert len(checks) == before  # nothing committed: no call into LanceDB
    with open_pack(tmp_root) as other:
        other.add_knowledge([KnowledgeChunk("written while the reader idled", "idle.md", 0)])
    time.sleep(0.1)  # the folder has settled: only its changed mtime tells
    assert pack.search("written while the reader idled").items[0].source == "idle.md"
    assert len(checks) == before + 1


def test_a_new_handle_leaves_its_first_search_to_lancedb(pack, tmp_root):
    """A one-shot handle (a CLI call) should not pay the full load for one search. The
    two paths' cosine lists are exact, so they agree; their BM25 lists come from two
    tokenizers (LanceDB's and bm25s'), so the comparison is of the cosine ranking."""
    cosine_only = {**OPEN_ALL, "lexical": "off"}
    with Pack.open("cache", tmp_root, embedder=SeededEmbedder(), settings=cosine_only) as fresh:  # type: ignore[arg-type]
        first = [item.id for item in fresh.search("chunk 6 of a.md", k=10).items]
        assert services_of(fresh).recall.vectors.rows == 0
        assert [item.id for item in fresh.search("chunk 6 of a.md", k=10).items] == first
        assert services_of(fresh).recall.vectors.rows == 1200


def test_cache_stands_aside_above_max_rows(pack):
    services_of(pack).recall.vectors.max_rows = 100
    assert top_ids(pack, "chunk 4 of a.md")[:1] == exact(pack, "chunk 4 of a.md")[0][:1]
    assert services_of(pack).recall.vectors.rows == 0


def test_repeated_query_is_embedded_once(tmp_root):
    embedder = SeededEmbedder()
    with Pack.open("q", tmp_root, embedder=embedder, settings=OPEN_ALL) as pack:
        pack.add_knowledge(chunks(20))
        calls = embedder.calls
        first = [item.id for item in pack.search("the same question").items]
        assert [item.id for item in pack.search("the same question").items] == first
        assert embedder.calls == calls + 1


def test_query_cache_is_bounded_lru():
    cache = QueryEmbeddingCache(max_entries=2)
    model = SeededEmbedder().embed
    a = cache.embed("a", model)
    cache.embed("b", model)
    cache.embed("a", model)  # a is now the most recent
    cache.embed("c", model)  # evicts b
    assert len(cache) == 2
    assert (cache.hits, cache.misses) == (1, 3)
    cache.embed("b", model)
    assert cache.misses == 4
    assert not a.flags.writeable


def test_a_cache_loaded_on_an_empty_pack_catches_up(tmp_path):
    """Bug: a cache loaded while the Pack had no rows caught up with ``_rowid > -1``,
    which Lance refuses (row ids are unsigned): every later recall failed."""
    from packs import KnowledgeChunk, Pack

    with Pack.open("empty", str(tmp_path)) as pack:
        for _ in range(3):  # the first search goes to LanceDB, the next ones load the cache
            assert pack.search("anything at all").items == ()
        with Pack.open("empty", str(tmp_path)) as other:
            other.add_knowledge([KnowledgeChunk("The pager rotates every Monday.", "oncall", 0)])
        assert "Monday" in pack.search("when does the pager rotate").items[0].text
