"""The first step of media ingestion: fetch a source and checkpoint its audio track.

Every step (this one, :mod:`packs.ingest.transcript`, :mod:`packs.ingest.upsert`) reads
its input from the checkpoint store, skips itself when its output is already there and
writes its output last, so a step killed at any point is simply run again. The
checkpoints are the source of truth for resuming (``docs/ingestion.md``). Prefect tasks
wrap these step functions one to one.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from packs.errors import CheckpointMissing
from packs.ingest.audio import extract_audio
from packs.ingest.checkpoints import CheckpointKeys as Keys
from packs.ingest.checkpoints import CheckpointStore
from packs.ingest.download import fetch
from packs.ingest.policy import IngestPolicy
from packs.ingest.sources import MediaSource, parse_source
from packs.ingest.target import IngestTarget


class Progress(Protocol):
    """A step's progress: the fraction done, and what it means (``"12 of 60 s of audio"``)."""

    def __call__(self, fraction: float, detail: str = "") -> None: ...


def no_progress(fraction: float, detail: str = "") -> None:
    pass


@dataclass(frozen=True)
class MediaRecord:
    """``<media_id>/media.json``: what was fetched, written after its audio."""

    media_id: str
    url: str  # the http(s) URL, or a file:// URI for a local file
    title: str
    bytes: int
    codec: str
    duration_s: float | None  # the container's estimate; the transcript has the exact one
    remuxed: bool

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MediaRecord:
        return cls(**data)


@dataclass(frozen=True)
class StepResult:
    """What a step did: ``reused`` when its checkpoint was already there."""

    step: str
    media_id: str
    reused: bool
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def media_record(store: CheckpointStore, media_id: str) -> MediaRecord:
    data = store.get_json(Keys.media(media_id))
    if data is None:
        raise CheckpointMissing(
            f"No fetched media {media_id!r} in {store.uri}: run the download step first."
        )
    return MediaRecord.from_dict(data)


def fetch_step(
    target: IngestTarget,
    source_text: str,
    work_dir: Path,
    *,
    refresh: bool = False,
    on_progress: Progress = no_progress,
    policy: IngestPolicy | None = None,
) -> StepResult:
    """Fetch a source and checkpoint its audio track; reuse a previous fetch of it. Under
    an agent's ``policy`` the source is checked first (a reused fetch too)."""
    started = time.perf_counter()
    if policy is not None:
        policy.check_source(source_text)
    source = parse_source(source_text)
    store = target.checkpoints()
    known = None if refresh else _known_fetch(store, source)
    if known is not None:
        return StepResult(
            "download", known.media_id, True, time.perf_counter() - started, asdict(known)
        )
    fetched = fetch(source, work_dir, on_progress=on_progress, policy=policy)
    media_id = fetched.media_id
    try:
        record = store.get_json(Keys.media(media_id))
        reused = record is not None and store.exists(Keys.audio(media_id))
        if not reused:
            record = asdict(
                _checkpoint_audio(
                    store, source, fetched.path, fetched.title, media_id, fetched.size, work_dir
                )
            )
        store.put_json(Keys.source(source.key), _fingerprint(source) | {"media_id": media_id})
    finally:
        if fetched.downloaded:
            shutil.rmtree(fetched.path.parent, ignore_errors=True)
    on_progress(1.0)
    return StepResult("download", media_id, reused, time.perf_counter() - started, record or {})


def _fingerprint(source: MediaSource) -> dict[str, Any]:
    if source.is_url:
        return {"source": source.location}
    stat = Path(source.location).stat()
    return {"source": source.location, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _known_fetch(store: CheckpointStore, source: MediaSource) -> MediaRecord | None:
    """The media a previous fetch of this source made, if its audio is still stored.

    A URL is trusted to serve what it served before (pass ``refresh`` to fetch again);
    a local file is trusted while its size and modification time are unchanged.
    """
    seen = store.get_json(Keys.source(source.key))
    if not seen or {k: v for k, v in seen.items() if k != "media_id"} != _fingerprint(source):
        return None
    record = store.get_json(Keys.media(seen["media_id"]))
    if record is None or not store.exists(Keys.audio(seen["media_id"])):
        return None
    return MediaRecord.from_dict(record)


def _checkpoint_audio(
    store: CheckpointStore,
    source: MediaSource,
    path: Path,
    title: str,
    media_id: str,
    size: int,
    work_dir: Path,
) -> MediaRecord:
    folder = work_dir / media_id
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"audio-{uuid.uuid4().hex[:8]}.mka"
    try:
        track = extract_audio(path, partial, source.display)
        store.put_file(Keys.audio(media_id), partial)  # the audio first ...
        if store.local_path(Keys.audio(media_id)) is None:
            partial.replace(folder / "audio.mka")  # kept for the transcribe step here
    finally:
        partial.unlink(missing_ok=True)
    url = source.location if source.is_url else Path(source.location).as_uri()
    record = MediaRecord(media_id, url, title, size, track.codec, track.duration_s, track.remuxed)
    store.put_json(Keys.media(media_id), asdict(record))  # ... then the record naming it
    return record
