"""The embedding provider interface.

A provider turns texts into L2-normalised float32 vectors of a fixed dimension. Its
:class:`EmbeddingInfo` is recorded in the Pack; a Pack refuses an embedder from another
vector *space* (model) or dimension, so vectors are never silently mixed. Two providers
of the same model (int8 ONNX and fp32 sentence-transformers agree to cosine 0.9996)
share a space and may be swapped.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from packs.errors import EmbeddingMismatch, InvalidEmbedding

Vectors = NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddingInfo:
    provider: str  # implementation, e.g. "onnx-int8"
    model: str  # model name, e.g. "all-MiniLM-L6-v2"
    space: str  # vectors from the same space are comparable
    dim: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmbeddingInfo:
        return cls(**{k: data[k] for k in ("provider", "model", "space", "dim")})

    def check_compatible(self, stored: EmbeddingInfo, pack: str) -> None:
        """Raise :class:`EmbeddingMismatch` unless this embedder may write to ``stored``."""
        if self.space != stored.space or self.dim != stored.dim:
            raise EmbeddingMismatch(
                f"Pack {pack!r} was built with {stored.provider}:{stored.model} "
                f"(space {stored.space!r}, dim {stored.dim}), but the embedder given is "
                f"{self.provider}:{self.model} (space {self.space!r}, dim {self.dim}). "
                "Open it with a provider of the same space, or build a new Pack."
            )


class EmbeddingProvider(ABC):
    """Batched text embedding. Subclasses implement :meth:`_embed_batch`.

    Texts are batched by length (less padding) and the batches, with ``workers > 1``,
    run on that many threads at once (a model that releases the GIL, such as
    onnxruntime, then uses as many cores); a single text runs on the calling thread.
    """

    info: EmbeddingInfo
    batch_size: int = 64
    workers: int = 1
    _pool: ThreadPoolExecutor | None = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches; rows are L2-normalised, in input order."""
        if not texts:
            return np.zeros((0, self.info.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        groups = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        out = np.empty((len(texts), self.info.dim), dtype=np.float32)

        def run(idx: list[int]) -> None:
            batch = [texts[i] for i in idx]
            out[idx] = check_vectors(self._embed_batch(batch), len(batch), self.info.dim, self)

        if self.workers > 1 and len(groups) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embed")
            list(self._pool.map(run, groups))  # re-raises the first batch's error
        else:
            for idx in groups:
                run(idx)
        return out

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> Vectors:
        """Embed one batch; must return shape ``(len(texts), dim)``, normalised."""


def l2_normalise(matrix: NDArray[np.floating]) -> Vectors:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)


def check_vectors(vectors: object, count: int, dim: int, source: object) -> Vectors:
    """``vectors`` as a ``(count, dim)`` float32 array of finite values, else
    :class:`InvalidEmbedding`: a NaN or infinite vector must never reach a table, where
    it fails the write of every row buffered with it."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.shape != (count, dim):
        raise InvalidEmbedding(
            f"Embedder {source!r} returned an array of shape {array.shape} for {count} "
            f"texts; expected ({count}, {dim})."
        )
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite).tolist()
        raise InvalidEmbedding(
            f"Embedder {source!r} returned non-finite (NaN or infinite) vectors for "
            f"text(s) {bad[:10]} of {count}; nothing was stored. Check the model or "
            "endpoint, or drop those texts."
        )
    return array
