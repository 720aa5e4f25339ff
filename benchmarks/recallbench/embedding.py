"""Query embedding and bulk knowledge ingestion with the Pack's real default embedder.

- **Query embedding.** Held-out queries embedded one at a time by the bare model, against
  ``Pack.search``'s embedding step through the query cache: first sight (a miss, the model
  runs) and a repeat (a hit). Interleaved in one shuffled order.
- **Ingestion.** ``--ingest-chunks`` chunks of about 750 characters (the chunker's target
  size), embedded by the bare model (``embedder.embed`` on the whole list), against
  ``Pack.add_knowledge`` of the same chunks into a fresh Pack: chunks/s and their ratio.
  The two alternate ``--ingest-repeats`` times, with one model shared.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingProvider, default_embedder
from packs.embeddings.cache import QueryEmbeddingCache

from .corpus import generate_sentences
from .stats import LatencyStats, interleaved

CHUNK_CHARS = 750


@dataclass
class EmbeddingResult:
    query_model: LatencyStats  # the bare model, one query
    query_cached: LatencyStats  # a repeated query through the Pack's cache
    chunk_chars: float  # mean characters per ingested chunk
    bare_chunks_per_s: list[float]
    pack_chunks_per_s: list[float]
    ingest_ratio: float  # median pack / median bare: the goal is >= 0.9


def chunk_texts(count: int, seed: int) -> list[str]:
    """``count`` distinct texts of about 750 characters, made of task sentences."""
    rng = random.Random(seed)
    sentences = generate_sentences(count * 10, rng)
    out: list[str] = []
    for i in range(count):
        text = ""
        while len(text) < CHUNK_CHARS:
            text += rng.choice(sentences) + " "
        out.append(f"[{i}] {text.strip()}")
    return out


def query_latency(
    model: EmbeddingProvider, queries: Sequence[str], seed: int
) -> tuple[LatencyStats, LatencyStats]:
    cache = QueryEmbeddingCache()
    for query in queries:
        cache.embed(query, model.embed)  # every query seen once: the timed calls repeat
    times = interleaved(
        {
            "model": lambda q: model.embed([q]),
            "cached": lambda q: cache.embed(q, model.embed),
        },
        queries,
        seed,
    )
    return LatencyStats.of(times["model"]), LatencyStats.of(times["cached"])


def ingest(
    model: EmbeddingProvider, texts: Sequence[str], repeats: int
) -> tuple[list[float], list[float]]:
    chunks = [KnowledgeChunk(text, f"bench://ingest-{i // 20}", i) for i, text in enumerate(texts)]
    bare, packed = [], []
    for r in range(repeats):
        start = time.perf_counter()
        model.embed(list(texts))
        bare.append(len(texts) / (time.perf_counter() - start))
        with (
            tempfile.TemporaryDirectory() as root,
            Pack.open(f"ingest{r}", Path(root), embedder=model) as pack,
        ):
            start = time.perf_counter()
            pack.add_knowledge(chunks)
            packed.append(len(texts) / (time.perf_counter() - start))
    return bare, packed


def run_embedding(queries: Sequence[str], chunks: int, repeats: int, seed: int) -> EmbeddingResult:
    model = default_embedder()
    model.embed(list(queries[:8]))  # load and warm the session
    query_model, query_cached = query_latency(model, queries, seed)
    texts = chunk_texts(chunks, seed)
    bare, packed = ingest(model, texts, repeats)
    median = statistics.median(packed) / statistics.median(bare)
    return EmbeddingResult(
        query_model=query_model,
        query_cached=query_cached,
        chunk_chars=sum(map(len, texts)) / len(texts),
        bare_chunks_per_s=bare,
        pack_chunks_per_s=packed,
        ingest_ratio=median,
    )
