"""Optional embedder: any OpenAI-compatible ``POST /v1/embeddings`` endpoint.

Transient answers (429, 5xx, connection errors) are retried with exponential backoff;
anything else is a clear :class:`EmbeddingServiceError`. The API key is sent in a header
and never logged or shown in ``repr``.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import numpy as np

from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, Vectors, l2_normalise
from packs.errors import EmbeddingServiceError, TransientEmbeddingServiceError

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


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
        last: str = ""
        for attempt in range(self._retries + 1):
            try:
                response = self._client.post(self._url, json=payload)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}"
            else:
                if response.status_code == 200:
                    return self._json(response)
                if response.status_code not in _RETRY_STATUS:
                    raise EmbeddingServiceError(
                        f"{self._url} answered HTTP {response.status_code}; check the base "
                        "URL, model name and API key."
                    )
                last = f"HTTP {response.status_code}"
            if attempt < self._retries:
                time.sleep(self._backoff_s * 2**attempt)
        raise TransientEmbeddingServiceError(
            f"{self._url} kept failing ({last}) after {self._retries + 1} attempts."
        )

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:  # json.JSONDecodeError, UnicodeDecodeError
            kind = response.headers.get("content-type", "no content type")
            raise EmbeddingServiceError(
                f"{self._url} answered HTTP 200 with a body that is not JSON ({kind}); "
                "check that the base URL points at the API, not a proxy or login page."
            ) from exc
