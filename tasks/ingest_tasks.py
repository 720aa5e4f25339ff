"""Ingestion tasks: one library step each, taking plain values (Pack name, root, ids).

Every step task persists its (small) result, so Prefect's default cache policy (inputs,
task source, flow run) reuses finished steps when a flow run is retried. Resuming in a
*new* run relies on the checkpoints in the Pack's storage, which each step reads first;
see ``docs/ingestion.md``. Retries apply to transient errors only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import task
from prefect.artifacts import update_progress_artifact

from packs.ingest import (
    ChunkingOptions,
    IngestTarget,
    TranscribeOptions,
    chunk_step,
    default_work_dir,
    fetch_step,
    media_source,
    transcribe_step,
    upsert_step,
)
from packs.ingest.documents import read_document
from packs.ingest.progress import ProgressEvent, publish
from packs.ingest.upsert import UPSERT_BATCH, upsert_chunks
from packs.records import KnowledgeChunk
from tasks.retry import retry_transient

# Flows override these per run (``with_options``); only transient errors are retried.
RETRIES = 3
RETRY_DELAY_S = 5.0
# Every ingestion step retries transient faults only (tasks/retry.py).
TRANSIENT: dict[str, Any] = {
    "retries": RETRIES,
    "retry_delay_seconds": RETRY_DELAY_S,
    "retry_condition_fn": retry_transient,
}
_ARTIFACT_EVERY_S = 2.0  # at most one progress-artifact update per item this often


def reporter(source: str, step: str, artifact_id: str | None) -> Callable[[float], None]:
    """Publish a step's progress in-process and to the item's Prefect progress artifact."""
    last = [0.0]

    def report(fraction: float) -> None:
        event = ProgressEvent(source, step, fraction)
        publish(event)
        now = time.monotonic()
        if artifact_id and (fraction >= 1.0 or now - last[0] >= _ARTIFACT_EVERY_S):
            last[0] = now
            update_progress_artifact(UUID(artifact_id), round(100 * event.overall, 1))

    return report


@task(name="prepare-pack", **TRANSIENT)
def prepare_pack_task(
    pack: str,
    root: str | None,
    transcribe: dict[str, Any] | None = None,
    chunking: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Check the run's options and open (or create) the Pack, before any item starts."""
    TranscribeOptions.from_dict(transcribe)
    ChunkingOptions.from_dict(chunking)
    with IngestTarget(pack, root).open_pack() as handle:
        return {"pack": handle.name, "root": handle.root}


@task(name="download", persist_result=True, **TRANSIENT)
def download_task(
    pack: str,
    root: str | None,
    source: str,
    work_dir: str | None = None,
    refresh: bool = False,
    artifact_id: str | None = None,
) -> dict[str, Any]:
    """Fetch ``source`` and checkpoint its audio; reuses an earlier fetch."""
    report = reporter(source, "download", artifact_id)
    report(0.0)
    target = IngestTarget(pack, root)
    result = fetch_step(
        target, source, default_work_dir(work_dir), refresh=refresh, on_progress=report
    )
    report(1.0)
    return result.to_dict()


@task(name="transcribe", persist_result=True, **TRANSIENT)
def transcribe_task(
    pack: str,
    root: str | None,
    fetched: dict[str, Any],
    options: dict[str, Any] | None = None,
    work_dir: str | None = None,
    artifact_id: str | None = None,
    source: str = "",
) -> dict[str, Any]:
    """Transcribe the fetched media, resuming after its last stored window."""
    report = reporter(source or fetched["media_id"], "transcribe", artifact_id)
    result = transcribe_step(
        IngestTarget(pack, root),
        fetched["media_id"],
        TranscribeOptions.from_dict(options),
        default_work_dir(work_dir),
        on_progress=report,
    )
    report(1.0)
    return result.to_dict()


@task(name="chunk", persist_result=True, **TRANSIENT)
def chunk_task(
    pack: str,
    root: str | None,
    transcript: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Time-aligned chunks of the stored transcript."""
    result = chunk_step(
        IngestTarget(pack, root),
        transcript["media_id"],
        transcript["info"]["fingerprint"],
        ChunkingOptions.from_dict(options),
    )
    return result.to_dict()


@task(name="embed-upsert", persist_result=True, **TRANSIENT)
def upsert_task(
    pack: str,
    root: str | None,
    chunked: dict[str, Any],
    batch_size: int = UPSERT_BATCH,
    artifact_id: str | None = None,
    source: str = "",
) -> dict[str, Any]:
    """Embed and merge the chunks the Pack lacks, in batches."""
    report = reporter(source or chunked["media_id"], "upsert", artifact_id)
    result = upsert_step(
        IngestTarget(pack, root),
        chunked["media_id"],
        chunked["info"]["key"],
        batch_size=batch_size,
        on_progress=report,
    )
    report(1.0)
    return result.to_dict()


@task(name="media-recall")
def media_recall_task(
    pack: str, root: str | None, query: str, media_id: str, k: int = 1
) -> dict[str, Any]:
    """The best chunks of one media item for ``query`` (ranked as recall, nothing logged)."""
    with IngestTarget(pack, root).open_pack() as handle:
        result = handle.search(query, k, where={"source": media_source(media_id)})
    return {"query": query, "items": [asdict(item) for item in result.items]}


@task(name="document-chunks", **TRANSIENT)
def document_chunks_task(path: str, source: str, max_chars: int) -> list[dict[str, Any]]:
    """Chunks of one document, split by its headings."""
    return [asdict(chunk) for chunk in read_document(Path(path), source, max_chars)]


@task(name="upsert-knowledge", **TRANSIENT)
def upsert_knowledge_task(
    pack: str, root: str | None, chunks: list[dict[str, Any]], batch_size: int = UPSERT_BATCH
) -> dict[str, int]:
    """Embed and merge the given chunks that the Pack lacks."""
    with IngestTarget(pack, root).open_pack() as handle:
        return upsert_chunks(handle, [KnowledgeChunk(**c) for c in chunks], batch_size)
