"""Ingestion tasks: one library step each, taking plain values (Pack name, root, ids).

Every step task persists its (small) result, so Prefect's default cache policy (inputs,
task source, flow run) reuses finished steps when a flow run is retried. Resuming in a
*new* run relies on the checkpoints in the Pack's storage, which each step reads first;
see ``docs/ingestion.md``. Retries apply to transient errors only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import task
from prefect.artifacts import update_progress_artifact

from packs.ingest import (
    ChunkingOptions,
    IngestTarget,
    StepResult,
    TranscribeOptions,
    chunk_step,
    default_work_dir,
    fetch_step,
    transcribe_step,
    upsert_step,
)
from packs.ingest.document_sources import document_sources
from packs.ingest.documents import read_document
from packs.ingest.media import Progress
from packs.ingest.policy import IngestPolicy
from packs.ingest.prepare import prepare_target
from packs.ingest.progress import ProgressEvent, publish
from packs.ingest.upsert import UPSERT_BATCH, upsert_chunks
from packs.records import KnowledgeChunk
from tasks.retry import TRANSIENT

# Every step retries transient faults only; the media flow sets the counts per run.
STEP_RETRIES = TRANSIENT.task_options()
_ARTIFACT_EVERY_S = 2.0  # at most one progress-artifact update per item this often


def reporter(source: str, step: str, artifact_id: str | None) -> Progress:
    """Publish a step's progress in-process and to the item's Prefect progress artifact."""
    last = [0.0]

    def report(fraction: float, detail: str = "") -> None:
        event = ProgressEvent(source, step, fraction, detail)
        publish(event)
        now = time.monotonic()
        if artifact_id and (fraction >= 1.0 or now - last[0] >= _ARTIFACT_EVERY_S):
            last[0] = now
            update_progress_artifact(UUID(artifact_id), round(100 * event.overall, 1))

    return report


@task(name="prepare-pack", **STEP_RETRIES)
def prepare_pack_task(
    pack: str,
    root: str | None,
    transcribe: dict[str, Any] | None = None,
    chunking: dict[str, Any] | None = None,
) -> IngestTarget:
    """Check the run's options and open (or create) the Pack, before any item starts."""
    return prepare_target(IngestTarget(pack, root), transcribe, chunking)


@task(name="download", persist_result=True, **STEP_RETRIES)
def download_task(
    pack: str,
    root: str | None,
    source: str,
    work_dir: str | None = None,
    refresh: bool = False,
    artifact_id: str | None = None,
    policy: IngestPolicy | None = None,
) -> StepResult:
    """Fetch ``source`` and checkpoint its audio; reuses an earlier fetch. ``policy``:
    an agent's allowlist and size limits (packs/ingest/policy.py)."""
    report = reporter(source, "download", artifact_id)
    report(0.0)
    target = IngestTarget(pack, root)
    result = fetch_step(
        target,
        source,
        default_work_dir(work_dir),
        refresh=refresh,
        on_progress=report,
        policy=policy,
    )
    report(1.0)
    return result


@task(name="transcribe", persist_result=True, **STEP_RETRIES)
def transcribe_task(
    pack: str,
    root: str | None,
    fetched: StepResult,
    options: dict[str, Any] | None = None,
    work_dir: str | None = None,
    artifact_id: str | None = None,
    source: str = "",
) -> StepResult:
    """Transcribe the fetched media, resuming after its last stored window."""
    report = reporter(source or fetched.media_id, "transcribe", artifact_id)
    result = transcribe_step(
        IngestTarget(pack, root),
        fetched.media_id,
        TranscribeOptions.from_dict(options),
        default_work_dir(work_dir),
        on_progress=report,
    )
    report(1.0)
    return result


@task(name="chunk", persist_result=True, **STEP_RETRIES)
def chunk_task(
    pack: str,
    root: str | None,
    transcript: StepResult,
    options: dict[str, Any] | None = None,
) -> StepResult:
    """Time-aligned chunks of the stored transcript."""
    result = chunk_step(
        IngestTarget(pack, root),
        transcript.media_id,
        transcript.info["fingerprint"],
        ChunkingOptions.from_dict(options),
    )
    return result


@task(name="embed-upsert", persist_result=True, **STEP_RETRIES)
def upsert_task(
    pack: str,
    root: str | None,
    chunked: StepResult,
    batch_size: int = UPSERT_BATCH,
    artifact_id: str | None = None,
    source: str = "",
    scope: str | None = None,
) -> StepResult:
    """Embed and merge the chunks the Pack lacks, in batches (in ``scope``)."""
    report = reporter(source or chunked.media_id, "upsert", artifact_id)
    result = upsert_step(
        IngestTarget(pack, root),
        chunked.media_id,
        chunked.info["key"],
        batch_size=batch_size,
        on_progress=report,
        scope=scope,
    )
    report(1.0)
    return result


@task(name="find-documents")
def find_documents_task(paths: list[str], skip_hidden: bool = False) -> list[tuple[str, str]]:
    """(path, source) of every document file named or found under the folders named."""
    return document_sources(paths, skip_hidden)


@task(name="document-chunks", **STEP_RETRIES)
def document_chunks_task(
    path: str, source: str, max_chars: int, policy: IngestPolicy | None = None
) -> list[KnowledgeChunk]:
    """Chunks of one document, split by its headings (only if ``policy`` allows it)."""
    return read_document(Path(path), source, max_chars, policy)


@task(name="upsert-knowledge", **STEP_RETRIES)
def upsert_knowledge_task(
    pack: str,
    root: str | None,
    chunks: list[KnowledgeChunk],
    batch_size: int = UPSERT_BATCH,
    scope: str | None = None,
) -> dict[str, int]:
    """Embed and merge the given chunks that the Pack lacks (in ``scope``)."""
    with IngestTarget(pack, root).open_pack() as handle:
        return upsert_chunks(handle, chunks, batch_size, scope=scope)
