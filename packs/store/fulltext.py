"""LanceDB's native full-text (BM25) index over ``memories``: the lexical half of Phase A
when the in-process cache stands aside (``packs/recall/phases.py``).

One native inverted index per text column of :data:`packs.store.schemas.TEXT_COLUMNS`
(English stemming and stop words, LanceDB's ``simple`` tokenizer), queried together as
one ``MultiMatchQuery``. The indexes are made with the table (an empty table indexes
fine) and, for a Pack made before them, when it is next opened writable. Rows written
after an index are searched flat beside it until ``optimize()`` (compaction, maintenance)
folds them in, so a new row is found at once (docs/field-notes.md;
tests/packs/recall/test_hybrid.py).
"""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa

from packs.store import schemas
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)

TEXT_COLUMNS = schemas.TEXT_COLUMNS
SCORE_COLUMN = "_score"  # LanceDB's BM25 score, higher is better


def has_text_index(store: PackStore) -> bool:
    """Whether every text column is indexed (remembered once seen: indexes stay)."""
    if not store.text_indexed:
        present = store.index_types(schemas.MEMORIES).get("FTS", set())
        store.text_indexed = set(TEXT_COLUMNS) <= present
    return store.text_indexed


def text_config() -> Any:
    """The full-text index of each text column: English stemming and stop words (an
    ``lancedb.index.FTS``; lancedb's modules load only when used: quick_import.py)."""
    from lancedb.index import FTS

    return FTS(language="English", stem=True, remove_stop_words=True)


def ensure_text_index(store: PackStore) -> list[str]:
    """Build the missing full-text indexes of ``memories``; returns the columns built."""
    store.require_writable("index the memories' text")
    present = store.index_types(schemas.MEMORIES).get("FTS", set())
    missing = [c for c in TEXT_COLUMNS if c not in present]
    for column in missing:
        store.create_index(schemas.MEMORIES, column, text_config())
    store.text_indexed = True
    return missing


def text_search(
    store: PackStore, query: str, columns: list[str], where: str | None, limit: int
) -> pa.Table | None:
    """The ``limit`` best rows by BM25 over the text columns (``_score`` descending), with
    ``columns``; ``where`` filters first. None when the Pack has no full-text index yet
    (a Pack made before it, opened read-only)."""
    if not has_text_index(store):
        return None
    from lancedb.query import FullTextOperator, MultiMatchQuery

    match = MultiMatchQuery(query, list(TEXT_COLUMNS), boosts=None, operator=FullTextOperator.OR)

    def read(table: Any) -> pa.Table:
        search = table.search(match, query_type="fts")
        search = search.select([*columns, SCORE_COLUMN]).limit(limit)
        if where:
            search = search.where(where, prefilter=True)
        return search.to_arrow()

    found = store._read(schemas.MEMORIES, "full-text search 'memories'", read)
    positive = pa.compute.greater(found[SCORE_COLUMN], 0.0)
    return found.filter(positive)
