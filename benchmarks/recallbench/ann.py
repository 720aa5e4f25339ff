"""Phase A at 1M rows with an ANN index, where the vector cache stands aside.

A Pack of ``rows`` knowledge rows, perturbed copies of word-hash-embedded sentences, is
written straight to ``memories`` column-wise (:func:`knowledge_columns`) and indexed by
``pack.upkeep.maintain`` (IVF_SQ, cosine, as a real Pack gets it), in a
child process so that the build's memory does not count in this one's RSS. Held-out
queries are then timed, interleaved, through:

- ``scan``: an exact numpy scan of the same vectors (the truth, and the limit);
- ``lancedb ...``: LanceDB's indexed search with Phase A's columns and visibility filter
  (prefiltered, as ``packs.store.gateway.PackStore.search``), for a few ``nprobes`` and
  refine factors; ``nprobes=20 refine=4`` is what the gateway does;
- ``search``: ``Pack.search`` end to end, nothing logged;
- ``recall``: ``Pack.recall``, episode logging and its flushes included.

recall@k1 is the share of the exact top-k1 ids each path returns; for ``search`` and
``recall`` it is Phase A's candidates (above the similarity floor) against the exact top-k1
above the floor. RSS: the growth from opening the Pack and searching (the exact scan's
matrix is loaded after it). The tail: ``tail_rows`` chunks added through
``Pack.add_knowledge`` after the index was built, each searched with its own text: the
share found at rank 1 while they are un-indexed, and again after another ``maintain``.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from bench_storage import VECTOR_COLUMN, storage_of

from packs import KnowledgeChunk, Pack
from packs.recall import vector_cache
from packs.recall.candidates import RecallQuery
from packs.recall.phases import CANDIDATE_COLUMNS, phase_a
from packs.store import schemas
from packs.store.scopes import visible_clause

from .corpus import WordHashEmbedder, complete_columns, generate_sentences, perturbed
from .limit import ExactScan, overlap
from .stats import LatencyStats, interleaved, rss_mib

# (nprobes, refine_factor) swept beside the gateway's own (LanceDB's 20 probes, refine 4)
SWEEP = ((5, 4), (20, 4), (40, 4), (20, None))
_BATCH = 100_000  # rows per append commit: ten commits at 1M
_EXACT = "ann-exact.npy"


@dataclass
class AnnResult:
    rows: int
    build_s: float
    index_s: float
    indexes: list[str]
    rss_mib: float  # RSS growth: opening the Pack and searching (warm-up included)
    rss_mib_per_million: float
    rss_mib_after: float  # the same after every timed query, less the scan's matrix
    scan_mib: float  # the exact scan's float32 matrix, for comparison
    paths: dict[str, LatencyStats] = field(default_factory=dict)
    recall_at_k1: dict[str, float] = field(default_factory=dict)
    tail_rows: int = 0
    tail_add_s: float = 0.0
    tail_unindexed: int = 0  # rows outside the index when the tail was searched
    tail_found: float = 0.0  # share of the tail found at rank 1 at once (un-indexed)
    tail_search: LatencyStats | None = None
    tail_found_after_maintain: float = 0.0
    tail_unindexed_after_maintain: int = 0
    cache_forced_aside: bool = False  # below MAX_CACHED_ROWS the bench sets max_rows to 0


def knowledge_columns(
    lo: int, vectors: np.ndarray, texts: Sequence[str], schema: pa.Schema, now: datetime
) -> pa.Table:
    """Knowledge rows ``lo..`` built column-wise (a million row dicts take minutes):
    given columns, then nulls, zeros or ``now`` for the rest of the schema."""
    n = len(vectors)
    given: dict[str, pa.Array] = {
        "id": pa.array([f"k_ann_{lo + i}" for i in range(n)]),
        "kind": pa.array([schemas.KIND_KNOWLEDGE] * n),
        "intent_text": pa.array([texts[(lo + i) % len(texts)] for i in range(n)]),
        "intent_embedding": pa.FixedSizeListArray.from_arrays(
            pa.array(vectors.ravel(), pa.float32()), vectors.shape[1]
        ),
        "source": pa.array([f"bench://ann-{(lo + i) // 40}" for i in range(n)]),
    }
    return complete_columns(given, n, schema, now)


def build_ann_pack(root: Path, rows: int, seed: int, embedder: WordHashEmbedder) -> None:
    texts = generate_sentences(3_000, random.Random(seed))
    base = embedder.embed(texts)
    rng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    exact = np.empty((rows, embedder.info.dim), dtype=np.float32)
    with Pack.open("ann", root, embedder=embedder) as pack:
        schema = schemas.memories_schema(pack.embedding.dim)
        for lo in range(0, rows, _BATCH):
            idx = np.arange(lo, min(rows, lo + _BATCH))
            vectors = perturbed(base[idx % len(texts)], rng)
            exact[idx] = vectors
            table = knowledge_columns(lo, vectors, texts, schema, now)
            storage_of(pack).append(schemas.MEMORIES, table)
    np.save(root / _EXACT, exact)  # the scan's matrix, read back without Arrow's pool


class _Scan(ExactScan):
    """The exact scan over the vectors as written (ids ``k_ann_<row>``), loaded with
    numpy: reading a million vectors through Arrow would leave its pool holding as much
    again, which the RSS figures would count."""

    def __init__(self, root: Path) -> None:
        self.matrix = np.load(root / _EXACT)
        self.ids = np.array([f"k_ann_{i}" for i in range(len(self.matrix))])


def _build_and_index(root: Path, rows: int, seed: int, out: Any) -> None:
    """In a child process: build, then ``maintain`` (compaction and the indexes)."""
    embedder = WordHashEmbedder()
    start = time.perf_counter()
    build_ann_pack(root, rows, seed, embedder)
    build_s = time.perf_counter() - start
    with Pack.open("ann", root, embedder=embedder) as pack:
        start = time.perf_counter()
        report = pack.upkeep.maintain(retention=timedelta(0), index_threshold=min(rows, 100_000))
        out.put((build_s, time.perf_counter() - start, report.indexes_built))


def run_ann(root: Path, rows: int, queries: Sequence[str], seed: int, tail: int = 200) -> AnnResult:
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=_build_and_index, args=(root, rows, seed, out))
    child.start()
    build_s, index_s, indexes = out.get()
    child.join()
    embedder = WordHashEmbedder()
    embedder.embed(queries)  # its word vectors are not the Pack's memory
    rss_before = rss_mib()
    with Pack.open("ann", root, embedder=embedder) as pack:
        forced = rows <= vector_cache.MAX_CACHED_ROWS
        if forced:  # a smoke run: the indexed path all the same
            pack._svc.recall.vectors.max_rows = 0
        ranking = pack.settings.ranking
        k1, delta, clause = ranking.k1, ranking.delta, visible_clause(None)
        store = storage_of(pack)
        paths: dict[str, Callable[[str], object]] = {}
        for nprobes, refine in SWEEP:
            paths[f"lancedb nprobes={nprobes} refine={refine}"] = _ann(
                store._table(schemas.MEMORIES), embedder, k1, clause, nprobes, refine
            )
        queries_cache = pack._svc.embedder.queries
        paths["search"] = lambda q: (queries_cache.clear(), pack.search(q, k=k1))
        paths["recall"] = lambda q: (queries_cache.clear(), pack.recall(q, k=k1))
        for query in queries[:5]:
            for path in paths.values():
                path(query)
        rss = rss_mib() - rss_before
        scan = _Scan(root)
        paths = {"scan": lambda q: scan.top(embedder.embed([q])[0], k1), **paths}
        times = interleaved(paths, queries, seed)
        rss_after = rss_mib() - rss_before - (scan.matrix.nbytes + scan.ids.nbytes) / 2**20
        recall: dict[str, list[float]] = {name: [] for name in paths}
        for query in queries:
            vector = embedder.embed([query])[0]
            truth = scan.top(vector, k1)
            for name, path in paths.items():
                if name.startswith(("scan", "lancedb")):
                    recall[name].append(overlap(path(query), truth))  # type: ignore[arg-type]
            found = phase_a(store, RecallQuery(vector, k1, delta, clause), pack._svc.recall.vectors)
            floor = overlap(found.ids, scan.top(vector, k1, delta))
            recall["search"].append(floor)
            recall["recall"].append(floor)
        result = AnnResult(
            rows=rows,
            build_s=build_s,
            index_s=index_s,
            indexes=indexes,
            rss_mib=rss,
            rss_mib_per_million=rss / (rows / 1e6),
            rss_mib_after=rss_after,
            scan_mib=scan.matrix.nbytes / 2**20,
            paths={name: LatencyStats.of(t) for name, t in times.items()},
            recall_at_k1={name: float(np.mean(r)) for name, r in recall.items()},
            cache_forced_aside=forced,
        )
        _tail(pack, result, tail, seed)
    return result


def _tail(pack: Pack, result: AnnResult, count: int, seed: int) -> None:
    """Chunks added after the index: found at once (searched flat beside the index), and
    still found once ``maintain`` has folded them into it."""
    texts = [
        f"{s} (late {i})" for i, s in enumerate(generate_sentences(count, random.Random(seed + 5)))
    ]
    start = time.perf_counter()
    pack.add_knowledge(KnowledgeChunk(t, "bench://tail", i) for i, t in enumerate(texts))
    result.tail_rows, result.tail_add_s = count, time.perf_counter() - start
    result.tail_unindexed = _unindexed(pack)
    times, hits = [], []
    for text in texts:
        start = time.perf_counter()
        items = pack.search(text, k=1).items
        times.append(time.perf_counter() - start)
        hits.append(bool(items) and items[0].text == text)
    result.tail_search, result.tail_found = LatencyStats.of(times), float(np.mean(hits))
    pack.upkeep.maintain(retention=timedelta(0), index_threshold=min(result.rows, 100_000))
    result.tail_unindexed_after_maintain = _unindexed(pack)
    found = [(items := pack.search(t, k=1).items) and items[0].text == t for t in texts]
    result.tail_found_after_maintain = float(np.mean(found))


def _unindexed(pack: Pack) -> int:
    table = storage_of(pack)._table(schemas.MEMORIES)
    for index in table.list_indices():
        if VECTOR_COLUMN in index.columns:
            stats = table.index_stats(index.name)
            return int(stats.num_unindexed_rows) if stats else -1
    return -1


def _ann(
    table: Any, embedder: WordHashEmbedder, k1: int, clause: str, nprobes: int, refine: int | None
) -> Callable[[str], list[str]]:
    def search(query: str) -> list[str]:
        vector = embedder.embed([query])[0]
        hits = (
            table.search(vector, vector_column_name=VECTOR_COLUMN)
            .distance_type("cosine")
            .nprobes(nprobes)
            .select([*CANDIDATE_COLUMNS, "_distance"])
            .where(clause, prefilter=True)
        )
        if refine:
            hits = hits.refine_factor(refine)
        return list(hits.limit(k1).to_arrow()["id"].to_pylist())

    return search
