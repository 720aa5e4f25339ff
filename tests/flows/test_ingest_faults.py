"""Faults in the media flow: bad inputs fail alone, a crash after any step resumes, a
storage outage is retried or fails clearly and resumes. Real yt-dlp, faster-whisper,
LanceDB (local folder, or moto S3 behind a proxy that can go down)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.ingest import ingest_media_flow
from packs import Pack
from packs.errors import IngestFailed, InvalidInput, TransientStorageError
from packs.ingest import ChunkingOptions, IngestTarget, TranscribeOptions
from packs.ingest.chunking import knowledge_chunk
from packs.ingest.download import media_id_of
from packs.ingest.media import fetch_step
from packs.ingest.sources import MAX_URL_CHARS
from packs.ingest.transcript import chunk_step, stored_chunks, transcribe_step
from packs.ingest.upsert import upsert_chunks
from packs.store.rows import knowledge_id
from tests.support.media import Clips, bad_files, closed_port, make_clips, serve
from tests.support.proxy import flaky_proxy
from tests.support.storage import storage_of

pytestmark = [pytest.mark.slow]
FAST_RETRY = {"retries": 1, "retry_delay_s": 0.2}
CHUNKS = {"target_s": 5, "overlap_s": 0}  # the 9 s hello clip gives two chunks


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Clips:
    return make_clips(tmp_path_factory.mktemp("fault-media"))


@pytest.fixture(scope="module")
def bad(media: Clips) -> dict[str, Path]:
    return bad_files(media.folder, media.garden.path)


@pytest.fixture(scope="module")
def server(media: Clips, bad: dict[str, Path]):
    with serve(media.folder) as url:
        yield url


def media_rows(root: str, media_id: str, options: dict[str, str] | None = None) -> list[int]:
    with Pack.open("p", root, read_only=True, storage_options=options) as pack:
        rows = (
            storage_of(pack)
            .scan("memories", ["source_position"], f"source = 'media:{media_id}'")
            .to_pylist()
        )
    return sorted(r["source_position"] for r in rows)


def test_each_bad_input_gets_its_own_error_and_the_good_one_goes_through(
    media: Clips, bad: dict[str, Path], server: str, tmp_root: Path
):
    expected = {
        f"{server}/hello.wav": None,
        f"{server}/missing.mp3": "download: SourceNotFound: ",
        f"http://127.0.0.1:{closed_port()}/talk.mp3": "download: MediaUnreachable: ",
        "ftp://127.0.0.1/talk.mp3": "download: UnsupportedSource: ",
        f"file://{media.hello.path}": "download: UnsupportedSource: ",
        "https://example.org/" + "x" * MAX_URL_CHARS: "download: UnsupportedSource: ",
        f"{server}/notes.mp3": "download: NotMedia: ",  # a text file
        f"{server}/truncated.mp4": "download: CorruptMedia: ",
        str(bad["empty"]): "download: EmptyMedia: ",
        str(bad["silent"]): "transcribe: SilentMedia: ",
    }
    result = ingest_media_flow(
        sources=list(expected),
        pack="p",
        root=str(tmp_root),
        chunking=CHUNKS,
        fail_on_error=False,
        **FAST_RETRY,
    )
    errors = {row["source"]: row["error"] for row in result.items}
    for source, prefix in expected.items():
        if prefix is None:
            assert errors[source] is None
        else:
            assert errors[source] and errors[source].startswith(prefix), (source, errors[source])
    assert result.totals["failed"] == len(expected) - 1
    good = next(row for row in result.items if row["error"] is None)
    assert good["status"] == "ingested" and good["chunks"] >= 1
    assert media_rows(str(tmp_root), good["media_id"]) == list(range(good["chunks"]))


def test_a_run_with_failures_raises_a_summary_of_them(server: str, tmp_root: Path):
    with pytest.raises(IngestFailed) as failed:
        ingest_media_flow(
            sources=[f"{server}/missing.mp3", "ftp://host/a.mp3"], pack="p", root=str(tmp_root)
        )
    message = str(failed.value)
    assert message.startswith("2 of 2 items failed:")
    assert "missing.mp3: download: SourceNotFound" in message and "ftp://host/a.mp3" in message


def test_bad_options_are_refused_before_any_item_starts(media: Clips, tmp_root: Path):
    with pytest.raises(InvalidInput, match="target_s"):
        ingest_media_flow(
            sources=[str(media.hello.path)], pack="p", root=str(tmp_root), chunking={"target_s": 1}
        )
    with pytest.raises(InvalidInput, match="Unknown transcription options"):
        ingest_media_flow(
            sources=[str(media.hello.path)], pack="p", root=str(tmp_root), transcribe={"beam": 5}
        )
    assert not (tmp_root / "p" / "_ingest").exists()  # nothing was fetched


@pytest.mark.parametrize("crashed_after", ["download", "transcribe", "chunk", "half of upsert"])
def test_a_rerun_after_a_crash_at_any_step_skips_what_was_done(
    crashed_after: str, media: Clips, tmp_root: Path, tmp_path: Path
):
    """Leave the checkpoints a crash after each step leaves, then run the flow."""
    target = IngestTarget("p", str(tmp_root))
    source = str(media.hello.path)
    media_id = fetch_step(target, source, tmp_path).media_id
    done = ["download"]
    if crashed_after != "download":
        heard = transcribe_step(target, media_id, TranscribeOptions(), tmp_path)
        done.append("transcribe")
    if crashed_after in ("chunk", "half of upsert"):
        chunked = chunk_step(target, media_id, heard.info["fingerprint"], ChunkingOptions(**CHUNKS))
        done.append("chunk")
    if crashed_after == "half of upsert":
        first = stored_chunks(target.checkpoints(), chunked.info["key"])[:1]
        with target.open_pack() as pack:
            upsert_chunks(pack, [knowledge_chunk(c, media_id, source, "hello") for c in first])
    result = ingest_media_flow(sources=[source], pack="p", root=str(tmp_root), chunking=CHUNKS)
    (row,) = result.items
    assert row["reused_steps"] == done
    assert row["chunks"] >= 2
    assert row["written"] == row["chunks"] - (1 if crashed_after == "half of upsert" else 0)
    assert media_rows(str(tmp_root), media_id) == list(range(row["chunks"]))
    with Pack.open("p", str(tmp_root), read_only=True) as pack:
        assert pack.count(kind="knowledge") == row["chunks"]  # no duplicate rows
        pack.get(knowledge_id(f"media:{media_id}", row["chunks"] - 1))


@pytest.mark.s3
def test_a_brief_storage_outage_is_retried_and_the_run_completes(media: Clips, s3):
    with flaky_proxy(s3.endpoint) as proxy:
        root = s3.fresh_root("outage")
        proxy.outage(3.0)  # from the first refused connection on
        with pytest.MonkeyPatch.context() as env:
            for name, value in s3.env.items():
                env.setenv(name, value)
            env.setenv("AWS_ENDPOINT_URL", proxy.url)
            result = ingest_media_flow(
                sources=[str(media.hello.path)],
                pack="p",
                root=root,
                chunking=CHUNKS,
                retries=4,
                retry_delay_s=1.0,
            )
        assert proxy.refused > 0  # the outage was real
        print(f"ingest outage: {proxy.refused} connections refused during a 3 s outage")
    (row,) = result.items
    assert row["status"] == "ingested"
    assert media_rows(root, row["media_id"], s3.storage_options) == list(range(row["chunks"]))


@pytest.mark.s3
def test_a_long_outage_fails_clearly_and_a_rerun_resumes(media: Clips, s3, tmp_path: Path):
    with flaky_proxy(s3.endpoint) as proxy, pytest.MonkeyPatch.context() as env:
        for name, value in s3.env.items():
            env.setenv(name, value)
        env.setenv("AWS_ENDPOINT_URL", proxy.url)
        root = s3.fresh_root("outage")
        target = IngestTarget("p", root)
        source = str(media.hello.path)
        media_id = fetch_step(target, source, tmp_path).media_id
        transcribe_step(target, media_id, TranscribeOptions(), tmp_path)
        proxy.down()
        with pytest.raises(TransientStorageError, match="retry later") as down:
            ingest_media_flow(sources=[source], pack="p", root=root, retries=1, retry_delay_s=0.2)
        assert "'p'" in str(down.value)
        proxy.up()
        result = ingest_media_flow(sources=[source], pack="p", root=root, chunking=CHUNKS)
    (row,) = result.items
    assert row["status"] == "resumed" and row["reused_steps"] == ["download", "transcribe"]
    assert row["media_id"] == media_id_of(media.hello.path)
