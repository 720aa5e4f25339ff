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
from packs.store.scopes import SCOPE_KEY, check_scope, scoped_metadata

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
    ones without a scope). A document the Pack holds already under another source (in
    the same scope), or given twice, is stored once (:func:`by_content`). ``stale``
    counts stored rows of the same sources at positions this call did not write (a
    document that shrank); they are reported, not deleted.
    """
    scope = check_scope(scope)
    if scope is not None:
        chunks = [replace(c, metadata=scoped_metadata(c.metadata, scope)) for c in chunks]
    chunks = by_content(pack, chunks)
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
    return pack.memory_table.knowledge_texts(sources, scope)


def by_content(pack: Pack, chunks: Sequence[KnowledgeChunk]) -> list[KnowledgeChunk]:
    """``chunks`` with each document (the chunks of one source) kept once, by content.

    A document whose every chunk the Pack already holds, at the same positions and in
    the same scope, under another source is given that source, so nothing is written
    twice; so is a document given twice in ``chunks`` (the first source wins). Issue 23:
    a file ingested through its folder and then by its own path became two sets of rows,
    and recall filled two of three slots with the same text. A changed file matches no
    stored document and is written under its own source, as before: its sections
    replace the old ones by position.
    """
    documents: dict[str, list[KnowledgeChunk]] = {}
    for chunk in chunks:
        documents.setdefault(chunk.source, []).append(chunk)
    texts = {s: {c.position: c.text.strip() for c in doc} for s, doc in documents.items()}
    scopes = {s: (doc[0].metadata or {}).get(SCOPE_KEY) for s, doc in documents.items()}
    held = stored_documents(pack, texts, scopes)
    seen: dict[tuple[str | None, tuple[tuple[int, str], ...]], str] = {}
    out: dict[tuple[str, int], KnowledgeChunk] = {}
    for source, doc in documents.items():
        content = (scopes[source], tuple(sorted(texts[source].items())))
        homes = [
            s
            for s, stored in held.get(scopes[source], {}).items()
            if all(stored.get(p) == t for p, t in texts[source].items())
        ]
        home = source if source in homes or not homes else min(homes)
        home = seen.setdefault(content, home)
        for chunk in doc:  # a copy given twice: its chunks are kept once
            out.setdefault((home, chunk.position), replace(chunk, source=home))
    return list(out.values())


def stored_documents(
    pack: Pack, texts: dict[str, dict[int, str]], scopes: dict[str, str | None]
) -> dict[str | None, dict[str, dict[int, str]]]:
    """Per scope, the stored documents (source -> position -> text) whose first chunk
    is the first chunk of one of ``texts``: the only ones that can hold the same."""
    return pack.memory_table.knowledge_documents(texts, scopes)


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
