"""The storage under an open Pack, for tests that check what storage holds.

The engine hands its storage gateway to no one outside ``packs/store``, ``packs/services.py``
and the facade (issue 43; ``tests/test_architecture.py`` keeps it so). A test that checks
the rows, versions or fragments a Pack wrote, or plants a storage fault, needs the
gateway itself: this is that one seam, and the one read of the facade's private
``_store`` that such tests make.
"""

from __future__ import annotations

from packs.pack import Pack
from packs.store.gateway import PackStore


def storage_of(pack: Pack) -> PackStore:
    """The storage gateway under ``pack`` (the rows as committed, for a test to check)."""
    return pack._store  # private: the gateway is what these tests check
