"""Documents flow: text, Markdown and HTML files -> chunks by heading -> the Pack.

Each file is chunked by its own task (a bad file fails alone); the chunks of every
good file are then embedded and merged in batches by one task, which writes only the
chunks the Pack lacks or holds with other text. A chunk's source is the file's path
relative to the folder given (``docs/guide.md`` for ``docs/``), or its name for a file
given directly, so re-ingesting the same files hits the same rows. A ``scope`` makes
the chunks that user's or session's only; a ``policy`` (an agent's ingest, from
``wolfie mcp``) holds every file to the operator's allowlist and size limit.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from prefect import flow
from prefect.futures import wait

from packs.errors import IngestFailed
from packs.ingest.documents import MAX_CHARS
from packs.ingest.policy import IngestPolicy
from packs.ingest.upsert import UPSERT_BATCH
from packs.records import KnowledgeChunk
from tasks.ingest_tasks import (
    document_chunks_task,
    find_documents_task,
    prepare_pack_task,
    upsert_knowledge_task,
)
from tasks.publish_runs import publish_documents_task


@dataclass(frozen=True)
class DocumentRow:
    """One document of a run: the chunks read from it, or why it failed."""

    document: str  # its source in the Pack
    path: str
    chunks: int
    error: str | None = None  # "ErrorClass: message"


@dataclass(frozen=True)
class DocumentsRun:
    """What ``wolfie-ingest-documents`` returns."""

    pack: str
    documents: list[DocumentRow]
    chunks: int
    written: int  # chunks embedded and merged (new, or with other text than stored)
    stale: int  # stored chunks of these sources at positions no longer written
    wall_s: float


@flow(name="wolfie-ingest-documents", log_prints=True)
def ingest_documents_flow(
    paths: list[str],
    pack: str,
    root: str | None = None,
    max_chars: int = MAX_CHARS,
    batch_size: int = UPSERT_BATCH,
    fail_on_error: bool = True,
    scope: str | None = None,
    policy: IngestPolicy | None = None,
) -> DocumentsRun:
    """Ingest the document files (or folders of them) in ``paths`` into ``pack``."""
    started = time.perf_counter()
    prepare_pack_task(pack, root)
    files = find_documents_task(paths, skip_hidden=policy is not None)
    futures = [
        document_chunks_task.submit(path, source, max_chars, policy, return_state=False)
        for path, source in files
    ]
    wait(futures)
    rows: list[DocumentRow] = []
    chunks: list[KnowledgeChunk] = []
    for (path, source), future in zip(files, futures, strict=True):
        if future.state.is_completed():
            chunks += future.result()
            rows.append(DocumentRow(source, path, len(future.result())))
        else:
            error = future.state.result(raise_on_failure=False)
            rows.append(DocumentRow(source, path, 0, f"{type(error).__name__}: {error}"))
    written = upsert_knowledge_task(pack, root, chunks, batch_size, scope) if chunks else {}
    publish_documents_task(pack, [asdict(r) for r in rows], len(chunks), written.get("written", 0))
    result = DocumentsRun(
        pack,
        rows,
        len(chunks),
        written.get("written", 0),
        written.get("stale", 0),
        round(time.perf_counter() - started, 2),
    )
    failed = [row for row in rows if row.error]
    if failed:
        message = f"{len(failed)} of {len(rows)} documents failed:\n" + "\n".join(
            f"- {row.path}: {row.error}" for row in failed
        )
        print(message)
        if fail_on_error:
            raise IngestFailed(message)
    return result
