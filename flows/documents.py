"""Documents flow: text, Markdown and HTML files -> chunks by heading -> the Pack.

Each file is chunked by its own task (a bad file fails alone); the chunks of every
good file are then embedded and merged in batches by one task, which writes only the
chunks the Pack lacks or holds with other text. A chunk's source is the file's path
relative to the folder given (``docs/guide.md`` for ``docs/``), or its name for a file
given directly, so re-ingesting the same files hits the same rows.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact
from prefect.futures import wait

from packs.errors import IngestFailed
from packs.ingest.documents import KINDS, MAX_CHARS
from packs.ingest.upsert import UPSERT_BATCH
from tasks.ingest_tasks import document_chunks_task, prepare_pack_task, upsert_knowledge_task

DOCUMENTS_KEY = "ingest-documents-summary"


def document_sources(paths: list[str]) -> list[tuple[str, str]]:
    """(path, source) of every document file named or found under the folders named."""
    found: list[tuple[str, str]] = []
    for text in paths:
        path = Path(text).expanduser()
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in KINDS)
            found += [(str(p), f"{path.resolve().name}/{p.relative_to(path).as_posix()}")
                      for p in files if p.is_file()]  # fmt: skip
        else:
            found.append((str(path), path.name))
    return found


@flow(name="wolfie-ingest-documents", log_prints=True)
def ingest_documents_flow(
    paths: list[str],
    pack: str,
    root: str | None = None,
    max_chars: int = MAX_CHARS,
    batch_size: int = UPSERT_BATCH,
    fail_on_error: bool = True,
) -> dict[str, Any]:
    """Ingest the document files (or folders of them) in ``paths`` into ``pack``."""
    started = time.perf_counter()
    prepare_pack_task(pack, root)
    files = document_sources(paths)
    futures = [
        document_chunks_task.submit(path, source, max_chars, return_state=False)
        for path, source in files
    ]
    wait(futures)
    rows: list[dict[str, Any]] = []
    chunks: list[dict[str, Any]] = []
    for (path, source), future in zip(files, futures, strict=True):
        if future.state.is_completed():
            chunks += future.result()
            count = len(future.result())
            rows.append({"document": source, "path": path, "chunks": count, "error": None})
        else:
            error = future.state.result(raise_on_failure=False)
            rows.append({"document": source, "path": path, "chunks": 0,
                         "error": f"{type(error).__name__}: {error}"})  # fmt: skip
    written = upsert_knowledge_task(pack, root, chunks, batch_size) if chunks else {}
    failed = [row for row in rows if row["error"]]
    create_table_artifact(
        key=DOCUMENTS_KEY,
        table=rows,
        description=f"{len(rows) - len(failed)} of {len(rows)} documents, {len(chunks)} chunks "
        f"({written.get('written', 0)} written) into Pack {pack!r}.",
    )
    result = {
        "pack": pack,
        "documents": rows,
        "chunks": len(chunks),
        "written": written.get("written", 0),
        "stale": written.get("stale", 0),
        "wall_s": round(time.perf_counter() - started, 2),
    }
    if failed:
        message = f"{len(failed)} of {len(rows)} documents failed:\n" + "\n".join(
            f"- {row['path']}: {row['error']}" for row in failed
        )
        print(message)
        if fail_on_error:
            raise IngestFailed(message)
    return result
