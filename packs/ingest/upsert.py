"""Knowledge chunks into the Pack, in batches, writing only what the Pack lacks.

Chunk ids are ``knowledge_id(source, position)``; for media the source is
``media:<media_id>``, so ids are the media id and chunk index. The Pack is read first
and only chunks that are missing, or whose text differs, are embedded and merged
(``Pack.add_knowledge``, a ``merge_insert``). A re-run after a crash in the middle of
this step embeds only what was not yet written, and a second run writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from packs.ingest.chunking import knowledge_chunk
from packs.ingest.media import StepResult, media_record
from packs.ingest.target import IngestTarget
from packs.ingest.transcript import stored_chunks
from packs.pack import Pack
from packs.records import KnowledgeChunk
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.scopes import check_scope, same_scope_clause, scoped_metadata

# Chunks embedded and merged per commit: a 7-hour recording (~600 chunks) is a handful
# of commits, and at most this many texts and vectors are held at once (hand-set).
UPSERT_BATCH = 128


def upsert_chunks(
    pack: Pack,
    chunks: Sequence[KnowledgeChunk],
    batch_size: int = UPSERT_BATCH,
    on_progress: Callable[[float], None] | None = None,
    scope: str | None = None,
) -> dict[str, int]:
    """Add the chunks the Pack lacks or holds with other text; count what was done.

    ``scope`` (a user or session) makes every chunk that scope's (packs/store/scopes.py):
    only recalls in it see them, and the rows compared are that scope's own (the shared
    ones without a scope). ``stale`` counts stored rows of the same sources at positions
    this call did not write (a document that shrank); they are reported, not deleted.
    """
    scope = check_scope(scope)
    if scope is not None:
        chunks = [replace(c, metadata=scoped_metadata(c.metadata, scope)) for c in chunks]
    stored = stored_rows(pack, sorted({c.source for c in chunks}), scope)
    wanted = {(c.source, c.position) for c in chunks}
    missing = [c for c in chunks if stored.get((c.source, c.position)) != c.text.strip()]
    for start in range(0, len(missing), batch_size):
        pack.add_knowledge(missing[start : start + batch_size])
        if on_progress:
            on_progress(min(1.0, (start + batch_size) / len(missing)))
    stale = sum(key not in wanted for key in stored)
    return {"chunks": len(chunks), "written": len(missing), "stale": stale}


def stored_rows(
    pack: Pack, sources: list[str], scope: str | None = None
) -> dict[tuple[str, int], str]:
    """(source, position) -> text of the knowledge rows of ``sources`` in the Pack that
    belong to ``scope`` (the shared rows for None)."""
    if not sources:
        return {}
    kind = f"kind = {sql_literal(schemas.KIND_KNOWLEDGE)}"
    where = f"{kind} AND {in_clause('source', sources)} AND {same_scope_clause(scope)}"
    if not pack.store.count(schemas.MEMORIES, where):
        return {}
    columns = ["source", "source_position", "intent_text"]
    rows = pack.store.scan(schemas.MEMORIES, columns, where).to_pylist()
    return {(r["source"], int(r["source_position"])): r["intent_text"] for r in rows}


def upsert_step(
    target: IngestTarget,
    media_id: str,
    chunks_key: str,
    *,
    batch_size: int = UPSERT_BATCH,
    on_progress: Callable[[float], None] | None = None,
    scope: str | None = None,
) -> StepResult:
    """Write the stored chunks of ``media_id`` that the Pack lacks (in ``scope``)."""
    started = time.perf_counter()
    store = target.checkpoints()
    record = media_record(store, media_id)
    chunks = [
        knowledge_chunk(c, media_id, record.url, record.title)
        for c in stored_chunks(store, chunks_key)
    ]
    with target.open_pack() as pack:
        counts = upsert_chunks(pack, chunks, batch_size, on_progress, scope)
    reused = counts["written"] == 0
    return StepResult("upsert", media_id, reused, time.perf_counter() - started, dict(counts))
