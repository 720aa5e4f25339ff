"""Issue 16's limit: ``Pack.recall`` against an exact numpy scan of the same vectors.

A Pack of knowledge chunks is built through ``add_knowledge`` with the fast word-hash
embedder, so the embedding costs next to nothing and search is what is timed. The vectors
are then read back from the table into a float32 matrix: the *scan* path is the machine's
limit for exact search (embed, one matrix-vector product, ``argpartition``). Every path
runs interleaved in one shuffled order in one process:

- ``scan``: the limit row of cosine alone;
- ``scan+bm25``: the limit of hybrid Phase A (issue 20): the scan plus a ``bm25s`` query
  (bm25s' tokenizer with PyStemmer, ``get_scores``, ``argpartition``) over the same rows;
- ``recall``: ``Pack.recall``, logging and the flushes it triggers included;
- ``search``: the same ranking with nothing logged;
- ``lancedb``: Phase A as it was before the cache, LanceDB's flat cosine search.

The Pack's query-embedding cache is emptied before every timed call, so each recall embeds
its query. Agreement is measured in a separate pass: Phase A's candidates against the
exact top-k1 (above the similarity floor); the top-3 of each query's first timed recall
(or search), and of a search after that recall, against the exact top-3.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import bm25s
import lancedb
import numpy as np
import Stemmer
from bench_storage import REFINE_FACTOR, VECTOR_COLUMN, storage_of

from packs import Pack
from packs.recall.candidates import RecallQuery
from packs.recall.phases import CANDIDATE_COLUMNS, phase_a
from packs.recall.vector_cache import one_thread_product
from packs.records import Recall
from packs.store import schemas
from packs.store.scopes import visible_clause

from .corpus import WordHashEmbedder, build_knowledge_pack
from .stats import LatencyStats, interleaved, rss_mib

PATHS = ("scan", "scan+bm25", "recall", "search", "lancedb")


@dataclass
class LimitResult:
    rows: int
    build_s: float
    cache_load_s: float  # the second search: the whole vector column read into memory
    cache_mib: float  # the cache's vectors and columns (VectorCache.nbytes)
    rss_mib: float  # RSS growth over that search (Arrow's pool may reuse freed memory)
    paths: dict[str, LatencyStats]
    recall_over_scan: float  # recall p50 / scan p50: the goal is <= 3
    recall_over_hybrid: float  # recall p50 / (scan + bm25s) p50: issue 20's goal is <= 3
    search_over_scan: float
    lancedb_over_scan: float
    candidates_agree: float  # Phase A candidates vs exact top-k1 (goal >= 0.99)
    top3_agree: float  # the timed recalls' top-3 vs exact top-3 (goal >= 0.95)
    top3_agree_repeat: float  # search's top-3 after each query was recalled once


class ExactScan:
    """The limit: exact cosine top-k over the table's vectors held as one matrix."""

    def __init__(self, pack: Pack) -> None:
        arrow = storage_of(pack).scan(schemas.MEMORIES, ["id", "intent_embedding"])
        flat = arrow["intent_embedding"].combine_chunks().flatten().to_numpy()
        matrix = flat.reshape(arrow.num_rows, -1).astype(np.float32)
        self.matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self.ids = np.array(arrow["id"].to_pylist())
        texts = storage_of(pack).scan(schemas.MEMORIES, ["intent_text", "title"]).to_pylist()
        self.stemmer = Stemmer.Stemmer("english")
        self.bm25 = bm25s.BM25()
        self.bm25.index(
            self._tokens([f"{t['intent_text']}\n{t['title'] or ''}" for t in texts]),
            show_progress=False,
        )

    def _tokens(self, texts: list[str]) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    def top_words(self, query: str, k: int) -> np.ndarray:
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )[0]
        ids = self.bm25.get_tokens_ids(list(tokens))
        if not ids:
            return np.zeros(0, dtype=np.int64)
        scores = self.bm25.get_scores_from_ids(ids)
        best = np.argpartition(-scores, k - 1)[:k]
        return best[np.argsort(-scores[best])]

    def top(self, vector: np.ndarray, k: int, floor: float = -1.0) -> list[str]:
        scores = one_thread_product(self.matrix, vector)  # BLAS on one thread, as recall
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best])]
        return [str(i) for i in self.ids[best[scores[best] >= floor]]]


def overlap(found: Sequence[str], reference: Sequence[str]) -> float:
    if not reference:
        return 1.0 if not found else 0.0
    return len(set(found) & set(reference)) / len(reference)


def run_limit(
    root: Path, size: int, queries: Sequence[str], warmup: Sequence[str], seed: int
) -> LimitResult:
    name = f"limit{size}"
    build_s, _ = build_knowledge_pack(root, name, size, seed)
    embedder = WordHashEmbedder()
    with Pack.open(name, root, embedder=embedder) as pack:
        k1, delta = pack.settings.ranking.k1, pack.settings.ranking.delta
        scan = ExactScan(pack)
        table = lancedb.connect(storage_of(pack).location.uri).open_table(
            schemas.MEMORIES
        )  # raw path
        pack.search(queries[0])  # a new handle's first search is LanceDB's
        rss = rss_mib()
        start = time.perf_counter()
        pack.search(queries[0])
        cache_load_s, rss_growth = time.perf_counter() - start, rss_mib() - rss
        cache_mib = pack._svc.recall.vectors.nbytes / 2**20

        recalled: dict[str, list[str]] = {}

        def cold(method: Callable[[str], Recall]) -> Callable[[str], object]:
            def call(query: str) -> object:
                pack._svc.embedder.queries.clear()  # every timed call embeds its query
                result = method(query)
                recalled.setdefault(query, [item.id for item in result.items])
                return result

            return call

        def raw_lancedb(query: str) -> object:
            vector = embedder.embed([query])[0]
            hits = (
                table.search(vector, vector_column_name=VECTOR_COLUMN)
                .distance_type("cosine")
                .refine_factor(REFINE_FACTOR)
                .select([*CANDIDATE_COLUMNS, "_distance"])
            )
            return hits.limit(k1).to_arrow()

        paths = {
            "scan": lambda q: scan.top(embedder.embed([q])[0], k1),
            "scan+bm25": lambda q: (scan.top(embedder.embed([q])[0], k1), scan.top_words(q, k1)),
            "recall": cold(pack.recall),
            "search": cold(pack.search),  # shares recalled: the first of the two counts
            "lancedb": raw_lancedb,
        }
        for query in warmup:
            for path in paths.values():
                path(query)
        recalled.clear()
        times = interleaved(paths, queries, seed)
        agree_k1, agree_3, agree_again = [], [], []
        clause = visible_clause(None)
        for query in queries:
            vector = embedder.embed([query])[0]
            found = phase_a(
                storage_of(pack), RecallQuery(vector, k1, delta, clause), pack._svc.recall.vectors
            )
            agree_k1.append(overlap(found.ids, scan.top(vector, k1, delta)))
            exact3 = scan.top(vector, 3, delta)
            agree_3.append(overlap(recalled[query], exact3))
            again = [item.id for item in pack.search(query, k=3).items]
            agree_again.append(overlap(again, exact3))
    stats = {path: LatencyStats.of(times[path]) for path in PATHS}
    limit = stats["scan"].p50_ms
    return LimitResult(
        rows=size,
        build_s=build_s,
        cache_load_s=cache_load_s,
        cache_mib=cache_mib,
        rss_mib=rss_growth,
        paths=stats,
        recall_over_scan=stats["recall"].p50_ms / limit,
        recall_over_hybrid=stats["recall"].p50_ms / stats["scan+bm25"].p50_ms,
        search_over_scan=stats["search"].p50_ms / limit,
        lancedb_over_scan=stats["lancedb"].p50_ms / limit,
        candidates_agree=float(np.mean(agree_k1)),
        top3_agree=float(np.mean(agree_3)),
        top3_agree_repeat=float(np.mean(agree_again)),
    )
