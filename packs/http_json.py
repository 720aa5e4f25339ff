"""POST JSON to an OpenAI-compatible endpoint with bounded retries on transient answers.

Shared by the embeddings and lesson-writer clients. 408, 429 and 5xx answers and
transport errors (timeouts, refused connections) are retried with exponential backoff,
then raised as ``transient``; any other status, or a 200 whose body is not JSON, is
raised at once as ``permanent``. The request's headers (the API key) never appear in a
message.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from packs.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")  # loaded on first use: it brings click and rich (issue 45)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    retries: int,
    backoff_s: float,
    permanent: type[Exception],
    transient: type[Exception],
) -> Any:
    last = ""
    for attempt in range(retries + 1):
        try:
            response = client.post(url, json=payload)
        except httpx.TransportError as exc:
            last = type(exc).__name__
        else:
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError as exc:  # json.JSONDecodeError, UnicodeDecodeError
                    kind = response.headers.get("content-type", "no content type")
                    raise permanent(
                        f"{url} answered HTTP 200 with a body that is not JSON ({kind}); "
                        "check that the base URL points at the API, not a proxy or login page."
                    ) from exc
            if response.status_code not in RETRY_STATUS:
                raise permanent(
                    f"{url} answered HTTP {response.status_code}; check the base URL, model "
                    "name and API key."
                )
            last = f"HTTP {response.status_code}"
        if attempt < retries:
            time.sleep(backoff_s * 2**attempt)
    raise transient(f"{url} kept failing ({last}) after {retries + 1} attempts.")
