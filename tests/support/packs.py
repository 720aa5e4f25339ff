"""Shared helpers for Pack tests."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from packs import Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.store.schemas import all_schemas
from tests.support.storage import storage_of


def table_versions(pack: Pack) -> dict[str, tuple[int, int]]:
    """(version, rows) of every table: equal before and after means nothing was written."""
    store, out = storage_of(pack), {}
    for name in all_schemas(pack.embedding.dim):
        out[name] = (store.latest_version(name), store.count(name))
    return out


def stored_rows(pack: Pack, table: str, where: str | None = None) -> list[dict[str, Any]]:
    """Every column (vectors too) of the rows of ``table`` stored now (matching ``where``):
    what a flush wrote, read through the storage gateway's public reads."""
    store = storage_of(pack)
    return store.scan(table, store.schema(table).names, where).to_pylist()


class HashEmbedder(EmbeddingProvider):
    """A tiny deterministic embedder of another space, for mismatch tests only."""

    def __init__(self, dim: int = 8, space: str = "test:hash") -> None:
        self.info = EmbeddingInfo("hash", "hash", space, dim)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        rows = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            rows.append(np.frombuffer(digest[: self.info.dim], dtype=np.uint8).astype(np.float32))
        matrix = np.array(rows) + 1.0
        return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


class SeededEmbedder(EmbeddingProvider):
    """Deterministic Gaussian vectors seeded by the text: fast, and spread like real ones.
    ``calls`` counts the batches it embedded."""

    def __init__(self, dim: int = 32) -> None:
        self.info = EmbeddingInfo("seeded", "seeded", "test:seeded", dim)
        self.calls = 0

    def _embed_batch(self, texts: list[str]) -> Vectors:
        self.calls += 1
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).standard_normal(self.info.dim))
        matrix = np.array(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
