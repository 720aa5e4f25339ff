"""Where an ingestion writes: a Pack (by name and root) and its checkpoint store."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packs.ingest.checkpoints import CheckpointStore
from packs.pack import Pack
from packs.store.locations import PackLocation, locate


@dataclass(frozen=True)
class IngestTarget:
    """A Pack name and root; storage options as for :meth:`Pack.open` (never shown)."""

    pack: str
    root: str | None = None
    storage_options: Mapping[str, str] | None = field(default=None, repr=False)

    def location(self) -> PackLocation:
        return locate(self.pack, self.root, self.storage_options)

    def checkpoints(self) -> CheckpointStore:
        return CheckpointStore(self.location())

    def open_pack(self) -> Pack:
        options = dict(self.storage_options) if self.storage_options else None
        return Pack.open(self.pack, self.root, storage_options=options)


def default_work_dir(work_dir: str | os.PathLike[str] | None = None) -> Path:
    """Scratch space for downloads and audio being transcribed (not the checkpoints)."""
    path = Path(work_dir) if work_dir else Path(tempfile.gettempdir()) / "wolfie-ingest"
    path.mkdir(parents=True, exist_ok=True)
    return path
