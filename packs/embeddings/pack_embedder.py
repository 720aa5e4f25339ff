"""The embedder of one open Pack: its provider (loaded on first use), the checks every
vector passes, and a cache of recent query embeddings."""

from __future__ import annotations

import numpy as np

from packs.embeddings import default_embedder
from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, check_vectors
from packs.embeddings.cache import QueryEmbeddingCache


class PackEmbedder:
    """Embeds texts in the Pack's vector space (``info``); non-finite vectors refused."""

    def __init__(self, info: EmbeddingInfo, provider: EmbeddingProvider | None) -> None:
        self.info = info
        self._provider = provider
        self.queries = QueryEmbeddingCache()

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._provider is None:
            self._provider = default_embedder()
        # Every vector passes here, whatever the provider: a non-finite one is refused
        # before anything is buffered or written.
        return check_vectors(self._provider.embed(texts), len(texts), self.info.dim, self._provider)

    def embed_query(self, text: str) -> np.ndarray:
        """A query's embedding, from the cache of recent queries when it is there."""
        return self.queries.embed(text, self.embed)
