"""The benchmark corpus: templated task sentences, a fast deterministic embedder, and
Packs written straight to ``memories``.

Two kinds of Pack are built. :func:`build_pack` writes perturbed copies of a few thousand
really embedded sentences in big Arrow batches (half memories with learned state), for the
latency and fragment sections. :func:`build_knowledge_pack` goes through
``Pack.add_knowledge`` with :class:`WordHashEmbedder`, so only search is timed later, as
in issue 16's check.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from bench_storage import storage_of

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.store import schemas
from packs.store.rows import knowledge_row, memory_id

BUILD_BATCH = 25_000  # rows per append commit while building a Pack

_SUBJECTS = [
    "the nightly ETL job",
    "the billing service",
    "our Kubernetes cluster",
    "the React frontend",
    "the Postgres replica",
    "the payment webhook",
    "the search index",
    "the CI pipeline",
    "the mobile app",
    "the data warehouse",
    "the auth gateway",
    "the recommendation model",
    "the invoice exporter",
    "the Kafka consumer",
    "the S3 backup",
    "the feature-flag service",
    "the customer support bot",
    "the pricing spreadsheet",
    "the onboarding email flow",
    "the GPU training run",
    "the Terraform stack",
    "the Redis cache",
    "the audit log",
]
_VERBS = [
    "speed up",
    "debug",
    "migrate",
    "roll back",
    "monitor",
    "document",
    "secure",
    "refactor",
    "load-test",
    "deploy",
    "rate-limit",
    "back up",
    "profile",
    "shard",
    "retry",
    "validate",
]
_CONDITIONS = [
    "it times out under load",
    "memory keeps growing",
    "a deploy is half done",
    "the schema changed upstream",
    "credentials expired overnight",
    "traffic doubles on Monday",
    "the disk is almost full",
    "two writers race",
    "the region fails over",
    "logs show duplicate events",
    "latency spikes every hour",
    "a customer reports wrong totals",
]
_GOALS = [
    "without downtime",
    "before the quarterly audit",
    "for the EU customers",
    "with less than 1% error",
    "on a shoestring budget",
    "so on-call can sleep",
    "ahead of the product launch",
    "while keeping costs flat",
    "for the new hires",
]
_TOOLS = [
    "Prometheus",
    "pytest",
    "Grafana",
    "Airflow",
    "dbt",
    "Sentry",
    "GitHub Actions",
    "Helm",
    "pandas",
    "OpenTelemetry",
    "a bash script",
    "feature flags",
    "pg_stat_statements",
]
_TEMPLATES = [
    "How do I {verb} {subject} when {condition}?",
    "Steps to {verb} {subject} {goal}",
    "Why does {subject} break when {condition}, and how do I {verb} it?",
    "Use {tool} to {verb} {subject} {goal}",
    "Checklist: {verb} {subject} after {condition2}",
    "What is the safest way to {verb} {subject} with {tool} when {condition}?",
    "Plan to {verb} {subject} {goal} using {tool}",
    "Lessons from the time {subject} failed because {condition}",
]


def generate_sentences(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct task-like sentences from the templates, in a seeded order."""
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        text = rng.choice(_TEMPLATES).format(
            verb=rng.choice(_VERBS),
            subject=rng.choice(_SUBJECTS),
            condition=rng.choice(_CONDITIONS),
            condition2=rng.choice(_CONDITIONS),
            goal=rng.choice(_GOALS),
            tool=rng.choice(_TOOLS),
        )
        text = text[0].upper() + text[1:]
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def perturbed(base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Base vectors plus Gaussian noise of norm 0.1..0.35 (cosine to base ~0.99..0.94)."""
    noise = rng.standard_normal(base.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    noise *= rng.uniform(0.1, 0.35, size=(base.shape[0], 1)).astype(np.float32)
    out: np.ndarray = base + noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def corpus_row(
    i: int, text: str, vec: np.ndarray, now: datetime, rng: np.random.Generator
) -> dict[str, Any]:
    """Row ``i``: a knowledge chunk, or (odd ``i``) a memory with learned state."""
    chunk = KnowledgeChunk(f"{text} (note {i})", f"bench://doc-{i // 40}", i, f"Doc {i // 40}")
    row = knowledge_row(chunk, vec, now)
    if i % 2:
        rewards = int(rng.integers(1, 12))
        response = f"Resolved by runbook step {i % 97}; verified in staging."
        row.update(
            id=memory_id(row["intent_text"], response),
            kind=schemas.KIND_MEMORY,
            response_summary=response,
            experience_summary=f"Check the runbook before acting ({i % 13} prior incidents).",
            outcome="success" if rng.random() < 0.7 else "failure",
            signal_polarity=[None, "success", "failure"][int(rng.integers(0, 3))],
            utility=float(rng.uniform(-0.9, 0.9)),
            confidence=float(rng.uniform(0.0, 1.0)),
            # No reward log stands behind these synthetic utilities, and a rewarded
            # memory's stored state is the fold of its log (packs/journal/flush.py), so the
            # count starts at 0: the fragment run's reward_count check then holds exactly.
            reward_count=0,
            usage_count=rewards + int(rng.integers(0, 20)),
        )
    return row


def complete_columns(
    given: dict[str, pa.Array], n: int, schema: pa.Schema, now: datetime
) -> pa.Table:
    """``n`` rows of ``schema`` built column-wise (a million row dicts take minutes): the
    ``given`` columns, then nulls, ``now`` or zeros for the rest."""
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


def build_pack(
    root: Path,
    name: str,
    size: int,
    texts: Sequence[str],
    vectors: np.ndarray,
    seed: int,
    embedder: EmbeddingProvider | None = None,
) -> float:
    """Write a Pack of ``size`` rows straight to ``memories``; returns seconds taken."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    with Pack.open(name, root, embedder=embedder) as pack:
        schema = schemas.memories_schema(pack.embedding.dim)
        now = datetime.now(UTC)
        for lo in range(0, size, BUILD_BATCH):
            idx = np.arange(lo, min(size, lo + BUILD_BATCH))
            base = idx % len(texts)
            vecs = perturbed(vectors[base], rng)
            rows = [
                corpus_row(int(i), texts[int(b)], vecs[j], now, rng)
                for j, (i, b) in enumerate(zip(idx, base, strict=True))
            ]
            storage_of(pack).append(schemas.MEMORIES, pa.Table.from_pylist(rows, schema=schema))
        storage_of(pack).optimize(schemas.MEMORIES)
    return time.perf_counter() - start


class WordHashEmbedder(EmbeddingProvider):
    """Deterministic and fast: the sum of a seeded random vector per word, plus a little
    per-text noise, normalised. Texts sharing words are near, like a real model's."""

    info = EmbeddingInfo("word-hash", "word-hash", "bench:word-hash", 384)
    batch_size = 4096

    def __init__(self, noise: float = 0.3) -> None:
        self.noise = noise
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            vector = np.random.default_rng(_seed(word)).standard_normal(self.info.dim)
            self._words[word] = vector
        return vector

    def _embed_batch(self, texts: list[str]) -> Vectors:
        out = np.empty((len(texts), self.info.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower()) or [""]
            total = np.sum([self._word(w) for w in words], axis=0) / np.sqrt(len(words))
            jitter = np.random.default_rng(_seed(text)).standard_normal(self.info.dim)
            out[i] = total + self.noise * jitter
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def build_knowledge_pack(root: Path, name: str, size: int, seed: int) -> tuple[float, list[str]]:
    """``size`` knowledge chunks through ``Pack.add_knowledge`` with the word-hash
    embedder; returns the seconds taken and the texts stored."""
    texts = [f"{s} (note {i})" for i, s in enumerate(generate_sentences(size, random.Random(seed)))]
    start = time.perf_counter()
    with Pack.open(name, root, embedder=WordHashEmbedder()) as pack:
        pack.add_knowledge(
            KnowledgeChunk(text, f"bench://doc-{i // 40}", i, f"Doc {i // 40}")
            for i, text in enumerate(texts)
        )
        storage_of(pack).optimize(schemas.MEMORIES)
    return time.perf_counter() - start, texts


def prepared_pack(
    root: Path | None, prefix: str, rows: int, queries: int, seed: int
) -> tuple[Path, str, list[str]]:
    """The Pack ``{prefix}{rows}`` under ``root`` (a new temporary folder when None),
    built once from 600 embedded sentences, and ``queries`` further sentences to ask."""
    import tempfile

    from packs.embeddings import default_embedder

    root = root or Path(tempfile.mkdtemp(prefix=f"wolfie-{prefix}-"))
    pack = f"{prefix}{rows}"
    sentences = generate_sentences(600 + queries, random.Random(seed))
    texts, asked = sentences[:600], sentences[600:]
    if not (root / pack).exists():
        build_pack(root, pack, rows, texts, default_embedder().embed(texts), seed)
    return root, pack, asked


def run_meta(**fields: Any) -> dict[str, Any]:
    """When a run started, its parameters, the CPUs and the load average before it."""
    import os

    return {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        **fields,
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 2),
    }
