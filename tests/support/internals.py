"""The one way a test reaches the services a Pack is built from (issue 43).

For the tests about one service's own state that no public door shows: the vector
cache, the context index, the flusher, the background flush thread, the idempotency
keys. Every other test goes through the Pack's public API (``recall``, ``search``,
``get``, ``query``, ``count``, ``versions``, ``reward_log``, ``maturity``, ...).
"""

from __future__ import annotations

from packs import Pack
from packs.services import PackServices


def services_of(pack: Pack) -> PackServices:
    """The services ``pack`` hands its calls to (``packs/services.py``)."""
    return pack._svc  # private: the tests of a service's own state reach it here, once


def without_vector_cache(pack: Pack) -> Pack:
    """Phase A on LanceDB's search, as above ``MAX_CACHED_ROWS``: the cache stands aside."""
    services_of(pack).recall.vectors.max_rows = 0
    return pack
