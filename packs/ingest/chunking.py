"""Time-aligned chunking of a transcript. Pure: segments in, chunks out, no I/O.

A chunk gathers whole segments until adding the next one would make it longer than
``target_s`` seconds or ``max_chars`` characters; the next chunk starts with the
trailing segments that cover the last ``overlap_s`` seconds, so a sentence near a
boundary is found from either side. Chunk boundaries are segment boundaries, so each
chunk's ``start_s``/``end_s`` are real times in the media.

Defaults (hand-set, tune later): 45 s is about 110 spoken words (~150 words/min),
well inside the 256 word pieces all-MiniLM-L6-v2 embeds; ``max_chars=1000`` keeps a
fast speaker inside that limit too; 8 s of overlap is one or two segments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

from packs.errors import InvalidInput
from packs.ingest.transcribe import Segment
from packs.records import KnowledgeChunk
from packs.store.rows import stable_hash

MEDIA_SOURCE_PREFIX = "media:"


@dataclass(frozen=True)
class ChunkingOptions:
    target_s: float = 45.0
    overlap_s: float = 8.0
    max_chars: int = 1000

    def __post_init__(self) -> None:
        if not 5.0 <= float(self.target_s) <= 600.0:
            raise InvalidInput(f"target_s must be in 5..600 seconds, got {self.target_s!r}.")
        if not 0.0 <= float(self.overlap_s) <= float(self.target_s) / 2:
            raise InvalidInput(
                f"overlap_s must be in 0..target_s/2 ({self.target_s / 2}), got {self.overlap_s!r}."
            )
        if isinstance(self.max_chars, bool) or int(self.max_chars) < 100:
            raise InvalidInput(f"max_chars must be at least 100, got {self.max_chars!r}.")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ChunkingOptions:
        data = dict(data or {})
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise InvalidInput(f"Unknown chunking options {sorted(unknown)}.")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def fingerprint(self) -> str:
        return stable_hash(str(self.target_s), str(self.overlap_s), str(self.max_chars), size=6)


@dataclass(frozen=True)
class TimedChunk:
    index: int
    start_s: float
    end_s: float
    text: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimedChunk:
        return cls(**{f.name: data[f.name] for f in fields(cls)})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def chunk_segments(
    segments: Iterable[Segment], options: ChunkingOptions | None = None
) -> Iterator[TimedChunk]:
    """Chunks of ``segments`` (sorted by start), streamed: one chunk is held at a time."""
    options = options or ChunkingOptions()
    window: list[Segment] = []
    fresh = 0  # segments in ``window`` not yet emitted in any chunk
    index = 0
    for segment in segments:
        text = segment.text.strip()
        if not text:
            continue
        if fresh and _would_overflow(window, segment, options):
            yield _chunk(index, window)
            index += 1
            window = _overlap(window, options.overlap_s)
            fresh = 0
        window.append(segment)
        fresh += 1
    if fresh:
        yield _chunk(index, window)


def _would_overflow(window: list[Segment], nxt: Segment, options: ChunkingOptions) -> bool:
    span = nxt.end - window[0].start
    chars = sum(len(s.text.strip()) + 1 for s in window) + len(nxt.text.strip())
    return span > options.target_s or chars > options.max_chars


def _overlap(window: list[Segment], overlap_s: float) -> list[Segment]:
    """The trailing segments that start within ``overlap_s`` of the chunk's end."""
    end = window[-1].end
    carried: list[Segment] = []
    for segment in reversed(window[1:]):  # never carry the whole chunk: always progress
        if end - segment.start > overlap_s:
            break
        carried.insert(0, segment)
    return carried


def _chunk(index: int, window: list[Segment]) -> TimedChunk:
    text = " ".join(s.text.strip() for s in window)
    return TimedChunk(index, window[0].start, max(s.end for s in window), text)


def media_source(media_id: str) -> str:
    """The ``source`` of a media item's chunks: ids are (source, position) = (media, index)."""
    return MEDIA_SOURCE_PREFIX + media_id


def knowledge_chunk(
    chunk: TimedChunk, media_id: str, url: str, title: str | None
) -> KnowledgeChunk:
    """The Pack row for a chunk; its id is a hash of the media id and chunk index."""
    return KnowledgeChunk(
        text=chunk.text,
        source=media_source(media_id),
        position=chunk.index,
        title=title,
        start_s=chunk.start_s,
        end_s=chunk.end_s,
        metadata={"media_id": media_id, "url": url, "kind": "media"},
    )
