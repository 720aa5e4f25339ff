"""Transcribe and chunk steps: checkpointed window by window, resumed after the last.

A transcript is stored as parts, one per audio window, under a fingerprint of the
options that shape it (model, beam, language, VAD); ``transcript.json`` marks it
finished. Chunks are stored as one JSON-lines object per (transcript, chunking) pair.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from packs.errors import CheckpointMissing, EmptyMedia, SilentMedia
from packs.ingest.audio import SAMPLE_RATE, iter_windows
from packs.ingest.checkpoints import CheckpointKeys as Keys
from packs.ingest.checkpoints import CheckpointStore
from packs.ingest.chunking import ChunkingOptions, TimedChunk, chunk_segments
from packs.ingest.media import MediaRecord, Progress, StepResult, media_record, no_progress
from packs.ingest.target import IngestTarget
from packs.ingest.transcribe import Segment, TranscribeOptions, load_model, transcribe_window


def transcribe_step(
    target: IngestTarget,
    media_id: str,
    options: TranscribeOptions,
    work_dir: Path,
    *,
    on_progress: Progress = no_progress,
) -> StepResult:
    """Transcribe window by window, checkpointing each; resume after the last one stored."""
    started = time.perf_counter()
    store = target.checkpoints()
    fp = options.fingerprint
    done = store.get_json(Keys.transcript_done(media_id, fp))
    if done is not None:
        return StepResult("transcribe", media_id, True, time.perf_counter() - started, done)
    record = media_record(store, media_id)
    parts = [store.get_json(k) for k in _part_keys(store, media_id, fp)]
    state = _TranscriptState.resume([p for p in parts if p is not None])
    heard = _heard(record.duration_s, on_progress)
    heard(state.end_sample / SAMPLE_RATE)  # the step has begun (where a resume starts)
    audio = _local_audio(store, media_id, work_dir)
    try:
        summary = _transcribe_windows(store, record, options, audio, state, heard)
    finally:  # the scratch copy of a remote checkpoint; a killed run leaves it for reuse
        if store.local_path(Keys.audio(media_id)) is None:
            shutil.rmtree(work_dir / media_id, ignore_errors=True)
    on_progress(1.0)
    return StepResult("transcribe", media_id, False, time.perf_counter() - started, summary)


def _transcribe_windows(
    store: CheckpointStore,
    record: MediaRecord,
    options: TranscribeOptions,
    audio: Path,
    state: _TranscriptState,
    heard: Callable[[float], None],
) -> dict[str, Any]:
    """Transcribe and store each window from ``state.end_sample`` on; mark it done.
    ``heard`` gets the audio seconds transcribed so far, segment by segment."""
    fp, media_id = options.fingerprint, record.media_id
    for window in iter_windows(audio, record.title, options.window_s, state.end_sample):
        segments: list[Segment] = []
        if not window.silent:
            model = load_model(options)
            language = state.language or options.language
            segments, spoken = transcribe_window(model, window, options, language, heard)
            state.language = state.language or spoken  # detected once, then kept
        part = state.add(window.start_sample, window.end_sample, segments, window.silent)
        store.put_json(Keys.transcript_part(media_id, fp, part["index"]), part)
        heard(window.end_sample / SAMPLE_RATE)
    summary = state.finish(record, options, fp)
    store.put_json(Keys.transcript_done(media_id, fp), summary)
    return summary


def _heard(duration_s: float | None, on_progress: Progress) -> Callable[[float], None]:
    """Report audio seconds transcribed: the fraction of the container's duration (kept
    below 1 until the step ends: the estimate can be short) and the seconds in words,
    so an hour-long file shows where it is, not one stuck bar."""

    def heard(seconds: float) -> None:
        if duration_s:
            detail = f"{seconds:,.0f} of {duration_s:,.0f} s of audio"
            on_progress(min(0.99, seconds / duration_s), detail)
        else:
            on_progress(0.0, f"{seconds:,.0f} s of audio")

    return heard


def _part_keys(store: CheckpointStore, media_id: str, fp: str) -> list[str]:
    prefix = f"{media_id}/transcript/{fp}/"
    return [k for k in store.list(prefix) if k.rsplit("/", 1)[-1].startswith("part-")]


def _local_audio(store: CheckpointStore, media_id: str, work_dir: Path) -> Path:
    """The audio as a local file: the checkpoint itself, a copy left by fetch, or fetched."""
    local = store.local_path(Keys.audio(media_id))
    if local is not None:
        return local
    cached = work_dir / media_id / "audio.mka"
    if cached.is_file():
        return cached
    partial = cached.with_name(f"audio-{uuid.uuid4().hex[:8]}.mka")
    if not store.get_file(Keys.audio(media_id), partial):
        raise CheckpointMissing(f"No audio for media {media_id!r} in {store.uri}; fetch again.")
    partial.replace(cached)
    return cached


@dataclass
class _TranscriptState:
    """Running totals over the transcript parts, stored and resumed."""

    index: int = 0
    end_sample: int = 0
    segments: int = 0
    silent: int = 0
    language: str | None = None
    resumed: int = 0  # parts found from an earlier, interrupted run

    @classmethod
    def resume(cls, parts: list[dict[str, Any]]) -> _TranscriptState:
        state = cls(resumed=len(parts))
        for part in sorted(parts, key=lambda p: int(p["index"])):
            state.index = int(part["index"]) + 1
            state.end_sample = int(part["end_sample"])
            state.segments += len(part["segments"])
            state.silent += bool(part["silent"])
            state.language = state.language or part.get("language")
        return state

    def add(self, start: int, end: int, segments: list[Segment], silent: bool) -> dict[str, Any]:
        part = {
            "index": self.index,
            "start_sample": start,
            "end_sample": end,
            "silent": silent,  # below -60 dBFS throughout: not transcribed
            "language": self.language,
            "segments": [asdict(s) for s in segments],
        }
        self.index += 1
        self.end_sample = end
        self.segments += len(segments)
        self.silent += bool(part["silent"])
        return part

    def finish(self, record: MediaRecord, options: TranscribeOptions, fp: str) -> dict[str, Any]:
        if self.end_sample == 0:
            raise EmptyMedia(f"{record.title!r} ({record.url}) holds no audio samples.")
        if self.segments == 0:
            heard = "is silent" if self.silent == self.index else "holds no recognisable speech"
            raise SilentMedia(
                f"{record.title!r} ({record.url}) {heard} over its "
                f"{self.end_sample / SAMPLE_RATE:.1f} s; nothing to transcribe."
            )
        return {
            "duration_s": round(self.end_sample / SAMPLE_RATE, 3),
            "segments": self.segments,
            "parts": self.index,
            "resumed_parts": self.resumed,
            "silent_parts": self.silent,
            "language": self.language,
            "fingerprint": fp,
            "options": options.to_dict(),
        }


def iter_segments(store: CheckpointStore, media_id: str, fp: str) -> Iterator[Segment]:
    """The stored transcript's segments in order, one part in memory at a time."""
    for key in _part_keys(store, media_id, fp):
        for data in (store.get_json(key) or {}).get("segments", []):
            yield Segment.from_dict(data)


def chunk_step(
    target: IngestTarget, media_id: str, transcript_fp: str, options: ChunkingOptions
) -> StepResult:
    """Chunk the stored transcript and store the chunks as one JSON-lines object."""
    started = time.perf_counter()
    store = target.checkpoints()
    key = Keys.chunks(media_id, f"{transcript_fp}-{options.fingerprint}")
    stored = store.get_bytes(key)
    if stored is not None:
        info = {"chunks": len(stored.splitlines()), "key": key}
        return StepResult("chunk", media_id, True, time.perf_counter() - started, info)
    if store.get_json(Keys.transcript_done(media_id, transcript_fp)) is None:
        raise CheckpointMissing(
            f"Media {media_id!r} has no finished transcript {transcript_fp!r} in {store.uri}: "
            "run the transcribe step first."
        )
    chunks = chunk_segments(iter_segments(store, media_id, transcript_fp), options)
    lines = [json.dumps(c.to_dict(), ensure_ascii=False) for c in chunks]
    store.put_bytes(key, ("\n".join(lines) + "\n").encode())
    info = {"chunks": len(lines), "key": key}
    return StepResult("chunk", media_id, False, time.perf_counter() - started, info)


def stored_chunks(store: CheckpointStore, key: str) -> list[TimedChunk]:
    data = store.get_bytes(key)
    if data is None:
        raise CheckpointMissing(f"No chunks at {key!r} in {store.uri}: run the chunk step first.")
    return [TimedChunk.from_dict(json.loads(line)) for line in data.splitlines() if line.strip()]
