"""A Pack's tables opened with LanceDB itself, apart from the Pack's own handle (as
``tests/support/erasure.py`` reads them): for tests about what LanceDB does under a Pack
(a search's plan) or that leave a Pack as an older release made it."""

from __future__ import annotations

from typing import Any

import lancedb

from packs import Pack
from tests.support.storage import storage_of


def lance_db(pack: Pack) -> Any:
    """A LanceDB connection to ``pack``'s database (on a folder or on S3)."""
    location = storage_of(pack).location
    return lancedb.connect(location.uri, storage_options=location.storage_options or None)


def lance_table(pack: Pack, name: str) -> Any:
    """Table ``name`` of ``pack``, at its latest version."""
    return lance_db(pack).open_table(name)
