"""Optional embedder: any OpenAI-compatible ``POST /v1/embeddings`` endpoint.

Transient answers (429, 5xx, connection errors) are retried with exponential backoff;
anything else is a clear :class:`EmbeddingServiceError`. The API key is sent in a header
and never logged or shown in ``repr``.
"""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np

from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, Vectors, l2_normalise
from packs.errors import EmbeddingServiceError, TransientEmbeddingServiceError
from packs.http_json import post_json


class OpenAIEmbeddings(EmbeddingProvider):
    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        api_key: str | None = None,
        *,
        space: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self.info = EmbeddingInfo(
            provider="openai-http", model=model, space=space or f"openai:{model}", dim=dim
        )
        self.batch_size = batch_size
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._retries = retries
        self._backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAIEmbeddings:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAIEmbeddings(url={self._url!r}, model={self._model!r}, dim={self.info.dim})"

    def _embed_batch(self, texts: list[str]) -> Vectors:
        body = self._post({"model": self._model, "input": texts})
        try:
            items = sorted(body["data"], key=lambda item: item["index"])
            indices = [item["index"] for item in items]
            matrix = np.asarray([item["embedding"] for item in items], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingServiceError(
                f"{self._url} answered without a usable 'data' list of embeddings."
            ) from exc
        # Sorting by index only restores order if every input appears exactly once.
        if indices != list(range(len(texts))):
            raise EmbeddingServiceError(
                f"{self._url} returned embedding indices {indices[:10]}; expected each of "
                f"0..{len(texts) - 1} once. The endpoint is not OpenAI-compatible."
            )
        if matrix.shape != (len(texts), self.info.dim) or not np.isfinite(matrix).all():
            raise EmbeddingServiceError(
                f"{self._url} returned vectors of shape {matrix.shape}; expected "
                f"({len(texts)}, {self.info.dim}) finite values."
            )
        return l2_normalise(matrix)

    def _post(self, payload: dict[str, Any]) -> Any:
        return post_json(
            self._client,
            self._url,
            payload,
            retries=self._retries,
            backoff_s=self._backoff_s,
            permanent=EmbeddingServiceError,
            transient=TransientEmbeddingServiceError,
        )
