"""Fetching and decoding media: each bad input gets its own clear error (real yt-dlp over
a local HTTP server, real PyAV on files made with espeak-ng and ffmpeg)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from packs.errors import (
    CorruptMedia,
    EmptyMedia,
    MediaUnreachable,
    NotMedia,
    SourceNotFound,
    UnsupportedSource,
    is_transient,
)
from packs.ingest.audio import SAMPLE_RATE, decode_blocks, extract_audio, iter_windows
from packs.ingest.download import fetch, media_id_of
from packs.ingest.sources import MAX_URL_CHARS, parse_source
from tests.support.media import HELLO, bad_files, closed_port, ffmpeg, serve, speak, to_mp4


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("media")
    spoken = speak(HELLO, folder / "hello.wav")
    video = to_mp4(spoken, folder / "hello.mp4").path
    files = {"wav": spoken.path, "mp4": video, **bad_files(folder, video)}
    files["page"] = folder / "page.html"
    files["page"].write_text("<!doctype html><html><body><p>No media here.</p></body></html>")
    files["mute"] = folder / "mute.mp4"  # video with no audio track
    ffmpeg("-f", "lavfi", "-i", "color=c=black:s=64x64:r=5", "-t", "2", str(files["mute"]))
    return files


@pytest.fixture(scope="module")
def server(media: dict[str, Path]):
    with serve(media["wav"].parent) as url:
        yield url


@pytest.mark.parametrize(
    ("source", "error", "words"),
    [
        ("ftp://127.0.0.1/talk.mp3", UnsupportedSource, "only http:// and https://"),
        ("file:///tmp/talk.mp3", UnsupportedSource, "pass the local path"),
        ("https://example.org/" + "a" * MAX_URL_CHARS, UnsupportedSource, "longer than"),
        ("https://example.org/a talk.mp3", UnsupportedSource, "whitespace"),
        ("http:///talk.mp3", UnsupportedSource, "no host"),
        ("", UnsupportedSource, "empty"),
        ("/nonexistent/talk.mp3", SourceNotFound, "No file at"),
    ],
)
def test_unusable_sources_are_refused_before_any_io(source, error, words):
    with pytest.raises(error, match=words):
        parse_source(source)


def test_a_folder_is_not_a_media_source(tmp_path: Path):
    with pytest.raises(UnsupportedSource, match="is a folder"):
        parse_source(str(tmp_path))


@pytest.mark.slow
def test_download_by_url_names_media_by_content(server: str, media: dict[str, Path], tmp_path):
    fetched = fetch(parse_source(f"{server}/hello.mp4"), tmp_path)
    assert fetched.downloaded and fetched.title == "hello"
    assert fetched.media_id == media_id_of(media["mp4"])  # same bytes, same id
    assert fetched.path.read_bytes() == media["mp4"].read_bytes()
    local = fetch(parse_source(str(media["mp4"])), tmp_path)
    assert not local.downloaded and local.path == media["mp4"].resolve()
    assert local.media_id == fetched.media_id


@pytest.mark.slow
def test_download_errors_say_what_went_wrong(server: str, tmp_path: Path):
    with pytest.raises(SourceNotFound, match="HTTP 404"):
        fetch(parse_source(f"{server}/missing.mp3"), tmp_path)
    with pytest.raises(MediaUnreachable, match="Connection refused") as refused:
        fetch(parse_source(f"http://127.0.0.1:{closed_port()}/talk.mp3"), tmp_path)
    assert is_transient(refused.value)  # retried by the flow; a 404 is not
    with pytest.raises(NotMedia, match="not a media file"):
        fetch(parse_source(f"{server}/page.html"), tmp_path)
    with pytest.raises(EmptyMedia):
        fetch(parse_source(f"{server}/empty.wav"), tmp_path)


@pytest.mark.parametrize(
    ("kind", "error", "words"),
    [
        ("text", NotMedia, "is a text file"),
        ("page", NotMedia, "is a HTML file"),
        ("corrupt", CorruptMedia, "truncated or damaged"),
        ("empty", EmptyMedia, "empty file"),
        ("mute", NotMedia, "no audio track"),
    ],
)
def test_files_that_are_not_usable_media(media, tmp_path, kind, error, words):
    with pytest.raises(error, match=words):
        extract_audio(media[kind], tmp_path / "audio.mka", media[kind].name)


def test_audio_track_of_a_video_is_copied_without_reencoding(media, tmp_path):
    track = extract_audio(media["mp4"], tmp_path / "audio.mka", "hello.mp4")
    assert track.remuxed and track.codec == "aac"
    assert (tmp_path / "audio.mka").stat().st_size < media["mp4"].stat().st_size
    original = np.concatenate(list(decode_blocks(media["mp4"], "mp4"))).astype(np.float64)
    copied = np.concatenate(list(decode_blocks(tmp_path / "audio.mka", "mka"))).astype(np.float64)
    # The same sound, except AAC's encoder priming (here 743 samples, 46 ms), which the
    # mp4 edit list hides and Matroska keeps: media times shift by at most ~50 ms.
    shift = len(copied) - len(original)
    assert 0 <= shift <= 0.05 * SAMPLE_RATE
    assert np.corrcoef(original, copied[shift:])[0, 1] > 0.99


def test_windows_cover_the_audio_exactly_and_resume_at_any_window(media):
    full = np.concatenate(list(decode_blocks(media["wav"], "wav")))
    windows = list(iter_windows(media["wav"], "wav", window_s=2.0, search_s=0.5))
    assert len(windows) >= 3
    assert windows[0].start_sample == 0
    for a, b in itertools.pairwise(windows):
        assert a.end_sample == b.start_sample  # contiguous: nothing lost, nothing twice
        assert 1.5 * SAMPLE_RATE <= len(a.samples) <= 2.0 * SAMPLE_RATE  # cut in the search zone
    assert np.array_equal(np.concatenate([w.samples for w in windows]), full)
    resumed = list(iter_windows(media["wav"], "wav", 2.0, windows[1].end_sample, search_s=0.5))
    assert [(w.start_sample, w.end_sample) for w in resumed] == [
        (w.start_sample, w.end_sample) for w in windows[2:]
    ]


def test_silence_is_detected_per_window(media):
    windows = list(iter_windows(media["silent"], "silent.wav", window_s=60.0))
    assert windows and all(w.silent for w in windows)
    assert not any(w.silent for w in iter_windows(media["wav"], "wav", window_s=60.0))
