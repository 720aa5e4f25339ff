"""Media and document ingestion into a Pack: library code, no Prefect.

Steps, each checkpointed in the Pack's own storage (``<root>/<pack>/_ingest/``):
:func:`fetch_step` (download, content-hash media id, audio track),
:func:`transcribe_step` (faster-whisper, window by window), :func:`chunk_step`
(time-aligned chunks) and :func:`upsert_step` (embed and merge in batches). Documents
are chunked by heading structure in :mod:`packs.ingest.documents`.
"""

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
