"""Media and document ingestion into a Pack: library code, no Prefect.

Steps, each checkpointed in the Pack's own storage (``<root>/<pack>/_ingest/``):
:func:`fetch_step` (download, content-hash media id, audio track),
:func:`transcribe_step` (faster-whisper, window by window), :func:`chunk_step`
(time-aligned chunks) and :func:`upsert_step` (embed and merge in batches). Documents
are chunked by heading structure in :mod:`packs.ingest.documents`. The names below load
on first use (``packs/lazy.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packs.lazy import lazy_exports

if TYPE_CHECKING:
    from packs.ingest.chunking import ChunkingOptions, TimedChunk, chunk_segments, media_source
    from packs.ingest.media import MediaRecord, StepResult, fetch_step
    from packs.ingest.target import IngestTarget, default_work_dir
    from packs.ingest.transcribe import Segment, TranscribeOptions
    from packs.ingest.transcript import chunk_step, transcribe_step
    from packs.ingest.upsert import upsert_step

__all__ = [
    "ChunkingOptions",
    "IngestTarget",
    "MediaRecord",
    "Segment",
    "StepResult",
    "TimedChunk",
    "TranscribeOptions",
    "chunk_segments",
    "chunk_step",
    "default_work_dir",
    "fetch_step",
    "media_source",
    "transcribe_step",
    "upsert_step",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ChunkingOptions": "packs.ingest.chunking",
        "IngestTarget": "packs.ingest.target",
        "MediaRecord": "packs.ingest.media",
        "Segment": "packs.ingest.transcribe",
        "StepResult": "packs.ingest.media",
        "TimedChunk": "packs.ingest.chunking",
        "TranscribeOptions": "packs.ingest.transcribe",
        "chunk_segments": "packs.ingest.chunking",
        "chunk_step": "packs.ingest.transcript",
        "default_work_dir": "packs.ingest.target",
        "fetch_step": "packs.ingest.media",
        "media_source": "packs.ingest.chunking",
        "transcribe_step": "packs.ingest.transcript",
        "upsert_step": "packs.ingest.upsert",
    },
    globals(),
)
