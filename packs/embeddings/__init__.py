"""Embedding providers. The default is offline all-MiniLM-L6-v2 (int8 ONNX)."""

from __future__ import annotations

import threading

from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, Vectors

__all__ = ["EmbeddingInfo", "EmbeddingProvider", "Vectors", "default_embedder"]

_default: EmbeddingProvider | None = None
_lock = threading.Lock()


def default_embedder() -> EmbeddingProvider:
    """The process-wide default embedder, loaded once on first use."""
    global _default
    with _lock:
        if _default is None:
            from packs.embeddings.onnx_minilm import OnnxMiniLM

            _default = OnnxMiniLM()
        return _default
