"""Time-aligned chunking of transcripts: pure, checked against chunks worked out by hand."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packs.errors import InvalidInput
from packs.ingest.chunking import (
    ChunkingOptions,
    TimedChunk,
    chunk_segments,
    knowledge_chunk,
    media_source,
)
from packs.ingest.transcribe import Segment
from packs.store.rows import knowledge_id


def seg(start: float, end: float, text: str = "word") -> Segment:
    return Segment(start, end, text)


def test_chunks_gather_whole_segments_up_to_the_target_and_carry_the_overlap():
    # Segments of 4 s every 4 s. Target 10 s: a chunk takes 0-4, 4-8; adding 8-12
    # would span 12 s > 10, so it closes at 8 s. Overlap 4 s carries the segment that
    # starts within 4 s of the end (4-8) into the next chunk.
    segments = [seg(4 * i, 4 * i + 4, f"s{i}") for i in range(6)]
    chunks = list(chunk_segments(segments, ChunkingOptions(target_s=10, overlap_s=4)))
    assert chunks == [
        TimedChunk(0, 0, 8, "s0 s1"),
        TimedChunk(1, 4, 12, "s1 s2"),
        TimedChunk(2, 8, 16, "s2 s3"),
        TimedChunk(3, 12, 20, "s3 s4"),
        TimedChunk(4, 16, 24, "s4 s5"),
    ]


def test_no_overlap_partitions_the_transcript():
    segments = [seg(2 * i, 2 * i + 2, f"w{i}") for i in range(10)]
    chunks = list(chunk_segments(segments, ChunkingOptions(target_s=6, overlap_s=0)))
    assert [(c.start_s, c.end_s) for c in chunks] == [(0, 6), (6, 12), (12, 18), (18, 20)]
    assert " ".join(c.text for c in chunks) == " ".join(f"w{i}" for i in range(10))


def test_a_segment_longer_than_the_target_is_a_chunk_of_its_own():
    segments = [seg(0, 2, "a"), seg(2, 40, "long"), seg(40, 42, "b")]
    chunks = list(chunk_segments(segments, ChunkingOptions(target_s=10, overlap_s=0)))
    assert [(c.start_s, c.end_s, c.text) for c in chunks] == [
        (0, 2, "a"),
        (2, 40, "long"),
        (40, 42, "b"),
    ]


def test_max_chars_closes_a_chunk_before_the_time_target():
    words = "x" * 60
    segments = [seg(i, i + 1, words) for i in range(5)]  # 60 chars per 1 s segment
    chunks = list(
        chunk_segments(segments, ChunkingOptions(target_s=60, overlap_s=0, max_chars=130))
    )
    # two segments take 60 + 1 + 60 = 121 chars; a third would make 182 > 130
    assert [c.text.count("x") for c in chunks] == [120, 120, 60]


def test_blank_segments_are_skipped_and_empty_input_gives_no_chunk():
    assert list(chunk_segments([seg(0, 1, "  ")])) == []
    assert list(chunk_segments([])) == []


def test_chunk_ids_are_media_id_and_index():
    chunk = TimedChunk(3, 12.5, 40.0, "hello")
    row = knowledge_chunk(chunk, "abc123", "https://example.org/talk.mp3", "Talk")
    assert row.source == media_source("abc123") == "media:abc123"
    assert (row.position, row.start_s, row.end_s, row.title) == (3, 12.5, 40.0, "Talk")
    assert row.metadata == {
        "media_id": "abc123",
        "url": "https://example.org/talk.mp3",
        "kind": "media",
    }
    assert knowledge_id(row.source, row.position) == knowledge_id("media:abc123", 3)


@pytest.mark.parametrize(
    "options",
    [{"target_s": 2}, {"target_s": 10, "overlap_s": 6}, {"max_chars": 10}, {"bogus": 1}],
)
def test_bad_options_are_refused(options):
    with pytest.raises(InvalidInput):
        ChunkingOptions.from_dict(options)


@given(
    lengths=st.lists(st.floats(0.2, 20.0), min_size=1, max_size=60),
    target=st.floats(5.0, 60.0),
    overlap_share=st.floats(0.0, 0.5),
)
def test_every_segment_lands_in_a_chunk_in_order(lengths, target, overlap_share):
    """No segment is lost, chunks move forward, and only overlap is repeated."""
    clock, segments = 0.0, []
    for i, length in enumerate(lengths):
        segments.append(seg(clock, clock + length, f"t{i}"))
        clock += length
    options = ChunkingOptions(target_s=target, overlap_s=target * overlap_share)
    chunks = list(chunk_segments(segments, options))
    seen = [word for c in chunks for word in c.text.split()]
    assert sorted(set(seen), key=lambda w: int(w[1:])) == [s.text for s in segments]
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(a.start_s < b.start_s for a, b in itertools.pairwise(chunks))
    assert all(c.end_s > c.start_s for c in chunks)
