"""Phase A at 1M rows with an ANN index, where the vector cache stands aside.

A Pack of ``rows`` perturbed copies of word-hash-embedded sentences is written straight to
``memories`` (:func:`build_pack`), an IVF_PQ index is built on ``intent_embedding``
(cosine), and held-out queries are timed, interleaved, through:

- ``scan``: an exact numpy scan of the same vectors (the truth, and the limit);
- ``ann nprobes=N``: LanceDB's indexed search with ``refine_factor`` 4 (as
  ``packs.retrieval.vector_query``), reading Phase A's columns, for a few ``nprobes``;
- ``search``: ``Pack.search`` end to end (the cache stands aside above its row limit).

recall@k1 is the share of the exact top-k1 ids each path returns. RSS is sampled after the
Pack is opened and searched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from packs import Pack, schemas
from packs.retrieval import CANDIDATE_COLUMNS, vector_query

from .corpus import WordHashEmbedder, build_pack, generate_sentences
from .limit import ExactScan, overlap
from .stats import LatencyStats, interleaved, rss_mib

NPROBES = (10, 20, 40)


@dataclass
class AnnResult:
    rows: int
    build_s: float
    index_s: float
    rss_mib: float
    paths: dict[str, LatencyStats] = field(default_factory=dict)
    recall_at_k1: dict[str, float] = field(default_factory=dict)


def run_ann(root: Path, rows: int, queries: Sequence[str], seed: int) -> AnnResult:
    embedder = WordHashEmbedder()
    texts = generate_sentences(3_000, random.Random(seed))
    start = time.perf_counter()
    build_pack(root, "ann", rows, texts, embedder.embed(texts), seed, embedder)
    build_s = time.perf_counter() - start
    with Pack.open("ann", root, embedder=embedder) as pack:
        table = pack.store.table(schemas.MEMORIES)
        start = time.perf_counter()
        table.create_index(
            metric="cosine", vector_column_name="intent_embedding", index_type="IVF_PQ",
            num_partitions=int(np.sqrt(rows)), num_sub_vectors=48,
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
        hits = vector_query(table, vector).nprobes(nprobes).select(CANDIDATE_COLUMNS)
        return list(hits.limit(k1).to_arrow()["id"].to_pylist())

    return search
