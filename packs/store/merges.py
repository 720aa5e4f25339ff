"""Where a memory went when a racing near-duplicate folded it into another.

:mod:`packs.near_duplicates` folds a memory created at the same instant as a
near-duplicate into the one committed first: it logs the memory's text as the winner's
merge (a ``merges`` row) and deletes its row. A memory's id is the hash of its text and
scope (:func:`packs.store.rows.memory_id`), so the merge row says which memory it was.
Another process that recalled the memory before the fold still holds its uses when it
flushes; :func:`folded_into` tells it where they go, so no use is lost.
"""

from __future__ import annotations

import json

from packs.store import schemas
from packs.store.gateway import PackStore
from packs.store.rows import memory_id
from packs.store.scopes import SCOPE_KEY

_COLUMNS = ["memory_id", "intent_text", "response_summary", "metadata_json"]


def folded_into(store: PackStore, ids: list[str]) -> dict[str, str]:
    """The memory each of ``ids`` was folded into, for those folded (read from the
    ``merges`` log; only asked when a row has vanished, so a full scan is fine)."""
    wanted = set(ids)
    if not wanted or not store.has_table(schemas.MERGES):
        return {}
    store.latest_version(schemas.MERGES)  # the fold that took them may be a moment old
    found: dict[str, str] = {}
    for row in store.scan(schemas.MERGES, _COLUMNS).to_pylist():
        scope = json.loads(row["metadata_json"] or "{}").get(SCOPE_KEY)
        merged = memory_id(row["intent_text"], row["response_summary"] or "", scope)
        if merged in wanted and merged != row["memory_id"]:
            found[merged] = row["memory_id"]
    return found
