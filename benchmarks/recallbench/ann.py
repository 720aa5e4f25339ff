"""Phase A at 1M rows with an ANN index, where the vector cache stands aside.

A Pack of ``rows`` knowledge rows, perturbed copies of word-hash-embedded sentences, is
written straight to ``memories`` column-wise (:func:`knowledge_columns`), an IVF_PQ index is built on ``intent_embedding``
(cosine), and held-out queries are timed, interleaved, through:

- ``scan``: an exact numpy scan of the same vectors (the truth, and the limit);
- ``ann nprobes=N``: LanceDB's indexed search with ``refine_factor`` 4 (as
  ``packs.store.gateway.PackStore.search``), reading Phase A's columns, for a few ``nprobes``;
- ``search``: ``Pack.search`` end to end (the cache stands aside above its row limit).

recall@k1 is the share of the exact top-k1 ids each path returns. RSS is sampled after the
Pack is opened and searched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from packs import Pack, schemas
from packs.recall.phases import CANDIDATE_COLUMNS
from packs.store.gateway import REFINE_FACTOR, VECTOR_COLUMN

from .corpus import WordHashEmbedder, generate_sentences, perturbed
from .limit import ExactScan, overlap
from .stats import LatencyStats, interleaved, rss_mib

NPROBES = (10, 20, 40)
_BATCH = 100_000
# Partitions: rows / 4,000 (250 at 1M) keeps k-means training within minutes on 2 cores;
# LanceDB's default of sqrt(rows) took longer than the 10-minute run allowed.


@dataclass
class AnnResult:
    rows: int
    build_s: float
    index_s: float
    rss_mib: float
    paths: dict[str, LatencyStats] = field(default_factory=dict)
    recall_at_k1: dict[str, float] = field(default_factory=dict)


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
    arrays = []
    for f in schema:
        if f.name in given:
            arrays.append(given[f.name].cast(f.type))
        elif f.nullable:
            arrays.append(pa.nulls(n, f.type))
        elif pa.types.is_timestamp(f.type):
            arrays.append(pa.array([now] * n, f.type))
        else:
            arrays.append(pa.array(np.zeros(n), pa.float64()).cast(f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def build_ann_pack(root: Path, rows: int, seed: int, embedder: WordHashEmbedder) -> None:
    texts = generate_sentences(3_000, random.Random(seed))
    base = embedder.embed(texts)
    rng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    with Pack.open("ann", root, embedder=embedder) as pack:
        schema = schemas.memories_schema(pack.embedding.dim)
        for lo in range(0, rows, _BATCH):
            idx = np.arange(lo, min(rows, lo + _BATCH))
            vectors = perturbed(base[idx % len(texts)], rng)
            table = knowledge_columns(lo, vectors, texts, schema, now)
            pack.store.append(schemas.MEMORIES, table)
        pack.store.compact(schemas.MEMORIES, timedelta(0))


def run_ann(root: Path, rows: int, queries: Sequence[str], seed: int) -> AnnResult:
    embedder = WordHashEmbedder()
    start = time.perf_counter()
    build_ann_pack(root, rows, seed, embedder)
    build_s = time.perf_counter() - start
    with Pack.open("ann", root, embedder=embedder) as pack:
        table = lancedb.connect(pack.store.location.uri).open_table(schemas.MEMORIES)  # raw
        start = time.perf_counter()
        table.create_index(
            metric="cosine", vector_column_name="intent_embedding", index_type="IVF_PQ",
            num_partitions=max(16, rows // 4_000), num_sub_vectors=48,
        )  # fmt: skip
        index_s = time.perf_counter() - start
        k1 = pack.settings.k1
        scan = ExactScan(pack)
        paths: dict[str, Callable[[str], list[str]]] = {
            "scan": lambda q: scan.top(embedder.embed([q])[0], k1),
            "search": lambda q: [i.id for i in pack.search(q, k=k1).items],
        }
        for nprobes in NPROBES:
            paths[f"ann nprobes={nprobes}"] = _ann(table, embedder, k1, nprobes)
        for query in queries[:5]:
            for path in paths.values():
                path(query)
        rss = rss_mib()
        times = interleaved(paths, queries, seed)
        recall = {name: [] for name in paths}  # type: dict[str, list[float]]
        for query in queries:
            truth = scan.top(embedder.embed([query])[0], k1)
            for name, path in paths.items():
                recall[name].append(overlap(path(query), truth))
    return AnnResult(
        rows=rows,
        build_s=build_s,
        index_s=index_s,
        rss_mib=rss,
        paths={name: LatencyStats.of(t) for name, t in times.items()},
        recall_at_k1={name: float(np.mean(r)) for name, r in recall.items()},
    )


def _ann(
    table: object, embedder: WordHashEmbedder, k1: int, nprobes: int
) -> Callable[[str], list[str]]:
    def search(query: str) -> list[str]:
        vector = embedder.embed([query])[0]
        hits = (
            table.search(vector, vector_column_name=VECTOR_COLUMN)  # type: ignore[attr-defined]
            .distance_type("cosine")
            .refine_factor(REFINE_FACTOR)
            .nprobes(nprobes)
            .select(CANDIDATE_COLUMNS)
        )
        return list(hits.limit(k1).to_arrow()["id"].to_pylist())

    return search
