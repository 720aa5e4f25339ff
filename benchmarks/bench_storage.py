"""The storage under an open Pack, for the benchmarks that time the engine's insides.

The engine hands its storage gateway to no one outside ``packs/store``,
``packs/services.py`` and the facade (issue 43). A few benchmarks measure what no public
call shows: they bulk-load synthetic rows, run Phase A on the store, search LanceDB's
own table, or count and time each commit by wrapping the gateway's methods. This is
their one seam, like ``tests/support/storage.py`` for the tests, and the one read of the
facade's private ``_store`` they make; ``tests/test_architecture.py`` names the modules
that may use it (``BENCH_SEAM_USERS``), a list that only shrinks.
"""

from __future__ import annotations

from typing import Any

from packs.store.gateway import REFINE_FACTOR, VECTOR_COLUMN  # what LanceDB's search uses

__all__ = ["REFINE_FACTOR", "VECTOR_COLUMN", "storage_of"]


def storage_of(pack: Any) -> Any:
    """The storage gateway (``PackStore``) under ``pack``."""
    return pack._store
