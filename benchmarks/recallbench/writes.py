"""Writes that cost what they add, and scoped recall at scale (issue 24).

- **writes**: 200 new chunks through ``Pack.add_knowledge`` into a maintained Pack of
  ``rows`` rows (id BTREE, tags LABEL_LIST and IVF_SQ indexes: ``scale.py``) against the
  same 200 into a fresh Pack, alternating, ``repeats`` times; each round's chunks are new
  (another source). Once with the word-hash embedder (the write path alone) and once with
  the shipped default embedder (what a user waits for). Re-adding a round's chunks
  unchanged is timed too (nothing to embed or write). Goal: large / fresh <= 3.
- **scopes**: a Pack of ``scopes`` x ``per_scope`` rows, each row in one scope, searched
  and recalled in a scope (its own rows only: none are shared) against an exact numpy scan
  of that scope's rows, with recall@k1 of Phase A's candidates; then the same recall with
  no scope on a Pack of as many shared rows (the unscoped figure). A scope's first search
  loads its rows (cold); later ones are timed over a rotation of ``active`` scopes.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bench_storage import storage_of

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingProvider, default_embedder
from packs.recall.candidates import RecallQuery
from packs.recall.phases import phase_a
from packs.store.scopes import visible_clause

from .corpus import generate_sentences
from .embedding import chunk_texts
from .scale import BuiltPack, FastMiniLMSpace, build_scale_pack
from .stats import LatencyStats, interleaved

CHUNKS = 200


@dataclass
class WriteResult:
    rows: int
    indexes: list[str]
    seconds: dict[str, list[float]]  # "<embedder> large|fresh|again" -> seconds per round
    ratio: dict[str, float] = field(default_factory=dict)  # embedder -> large / fresh


def _add(pack: Pack, chunks: list[KnowledgeChunk]) -> float:
    start = time.perf_counter()
    pack.add_knowledge(chunks)
    return time.perf_counter() - start


def run_writes(root: Path, rows: int, repeats: int, seed: int) -> WriteResult:
    built = build_scale_pack(root, rows, 0, seed)
    texts = chunk_texts(CHUNKS * repeats * 2, seed)
    result = WriteResult(rows, built.indexes, {})
    embedders: dict[str, Callable[[], EmbeddingProvider]] = {
        "word-hash": FastMiniLMSpace,
        "default": default_embedder,
    }
    for label, make in embedders.items():
        embedder = make()
        embedder.embed(texts[:8])
        for r in range(repeats):
            n = (r + repeats * (label == "default")) * CHUNKS
            chunks = [
                KnowledgeChunk(t, f"bench://writes-{label}-{r}", i)
                for i, t in enumerate(texts[n : n + CHUNKS])
            ]
            order = ["large", "fresh"] if r % 2 else ["fresh", "large"]
            for where in order:
                with tempfile.TemporaryDirectory() as fresh:
                    name, home = (built.name, root) if where == "large" else ("fresh", Path(fresh))
                    with Pack.open(name, home, embedder=embedder) as pack:
                        result.seconds.setdefault(f"{label} {where}", []).append(_add(pack, chunks))
                        if where == "large":
                            again = _add(pack, chunks)
                            result.seconds.setdefault(f"{label} again", []).append(again)
        result.ratio[label] = statistics.median(result.seconds[f"{label} large"]) / (
            statistics.median(result.seconds[f"{label} fresh"])
        )
    return result


@dataclass
class ScopeResult:
    scopes: int
    per_scope: int
    paths: dict[str, LatencyStats]
    recall_at_k1: float  # Phase A's candidates in a scope against the exact top-k1
    cold: LatencyStats  # a scope's first search on this handle (its rows loaded)
    scope_rows_cached: int


def _scoped_truth(built: BuiltPack, vector: np.ndarray, scope: int, k1: int) -> set[str]:
    rows = built.rows_of(scope)
    best = rows[np.argsort(-(built.vectors[rows] @ vector))[:k1]]
    return {built.row_id(int(r)) for r in best}


def run_scopes(
    root: Path, scopes: int, per_scope: int, queries: list[str], active: int, seed: int
) -> ScopeResult:
    built = build_scale_pack(root, scopes * per_scope, scopes, seed)
    shared = build_scale_pack(root, scopes * per_scope, 0, seed)
    embedder = FastMiniLMSpace()
    rng = random.Random(seed)
    rotation = rng.sample(range(scopes), active)
    with (
        Pack.open(built.name, root, embedder=embedder) as pack,
        Pack.open(shared.name, root, embedder=embedder) as unscoped,
    ):
        k1 = pack.settings.ranking.k1
        cold: list[float] = []
        for scope in rotation:  # each scope's first search on this handle
            start = time.perf_counter()
            pack.search(queries[scope % len(queries)], scope=f"u{scope}")
            cold.append(time.perf_counter() - start)
        turn = {q: rotation[i % active] for i, q in enumerate(queries)}
        matrix = {s: built.vectors[built.rows_of(s)] for s in rotation}
        cleared = pack._svc.embedder.queries

        def scan(q: str) -> object:
            vector = embedder.embed([q])[0]
            scores = matrix[turn[q]] @ vector
            return np.argpartition(-scores, k1 - 1)[:k1]

        paths: dict[str, Callable[[str], object]] = {
            "scan (the scope's rows)": scan,
            "search in a scope": lambda q: (cleared.clear(), pack.search(q, scope=f"u{turn[q]}")),
            "recall in a scope": lambda q: (cleared.clear(), pack.recall(q, scope=f"u{turn[q]}")),
            "recall, no scope (all rows shared)": lambda q: unscoped.recall(q),
        }
        unscoped.search(queries[0])
        unscoped.search(queries[0])
        times = interleaved(paths, queries, seed)
        agree = []
        for query in queries[:50]:
            vector = embedder.embed([query])[0]
            clause = visible_clause(f"u{turn[query]}")
            question = RecallQuery(vector, k1, -1.0, clause, visible=clause)
            found = phase_a(
                storage_of(pack), question, pack._svc.recall.vectors, pack._svc.recall.scopes
            )
            truth = _scoped_truth(built, vector, turn[query], k1)
            agree.append(len(truth & set(found.ids)) / len(truth))
        cached = sum(c.rows for c in pack._svc.recall.scopes._caches.values())
    return ScopeResult(
        scopes,
        per_scope,
        {n: LatencyStats.of(t) for n, t in times.items()},
        float(np.mean(agree)),
        LatencyStats.of(cold),
        cached,
    )


def scope_queries(count: int, seed: int) -> list[str]:
    return generate_sentences(count, random.Random(seed + 77))
