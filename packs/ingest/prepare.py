"""The first step of an ingest run: check its options, open (or create) the Pack."""

from __future__ import annotations

from typing import Any

from packs.ingest.chunking import ChunkingOptions
from packs.ingest.target import IngestTarget
from packs.ingest.transcribe import TranscribeOptions


def prepare_target(
    target: IngestTarget,
    transcribe: dict[str, Any] | None = None,
    chunking: dict[str, Any] | None = None,
) -> IngestTarget:
    """Refuse bad options before any item starts, and open (or create) the Pack; returns
    the target with the Pack's resolved root."""
    TranscribeOptions.from_dict(transcribe)
    ChunkingOptions.from_dict(chunking)
    with target.open_pack() as handle:
        return IngestTarget(handle.name, handle.root)
