"""The media ingestion flow with real parts: espeak-ng speech served over HTTP on
127.0.0.1, downloaded by yt-dlp, transcribed by faster-whisper tiny.en, into LanceDB on
a moto S3 server. The expensive run (killed mid-transcription, then resumed) is done
once per module; the tests below each check one property of it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evals.transcript_metrics import word_error_rate
from flows.ingest import MediaIngestRun, ingest_media_flow
from packs import Pack
from packs.ingest.checkpoints import CheckpointKeys as Keys
from packs.ingest.download import media_id_of
from packs.ingest.progress import ProgressEvent, listening
from packs.ingest.target import IngestTarget
from packs.ingest.transcribe import TranscribeOptions
from packs.ingest.transcript import iter_segments
from packs.store.rows import knowledge_id
from tasks.publish_runs import MEDIA_SUMMARY_KEY as SUMMARY_KEY
from tests.support.media import Clips, Spoken, make_clips, serve
from tests.support.storage import storage_of

pytestmark = [pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
WINDOW = {"window_s": 30}  # the onboarding clip (44 s) is transcribed in two windows
CHUNKS = {"target_s": 15, "overlap_s": 3}
# tiny.en on these espeak-ng voices measured WER 0.09 (onboarding) and 0.11 (garden).
# Losing or repeating one 30 s window of the onboarding clip costs more than 0.3, so
# 0.2 separates a resume bug from the model's own mistakes with room on both sides.
MAX_WER = 0.2

CHILD = """
import json, sys
from flows.runtime import configure_offline
configure_offline()
from flows.ingest import ingest_media_flow
ingest_media_flow(**json.loads(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Clips:
    return make_clips(tmp_path_factory.mktemp("ingest-media"))


@pytest.fixture(scope="module")
def server(media: Clips):
    with serve(media.folder) as url:
        yield url


def pack_rows(target: IngestTarget, media_id: str) -> list[dict[str, Any]]:
    options = dict(target.storage_options) if target.storage_options else None
    with Pack.open(target.pack, target.root, read_only=True, storage_options=options) as pack:
        where = f"source = 'media:{media_id}'"
        columns = ["id", "source_position", "start_s", "end_s", "intent_text"]
        rows = storage_of(pack).scan("memories", columns, where).to_pylist()
    return sorted(rows, key=lambda r: r["source_position"])


@dataclass
class Resumed:
    target: IngestTarget
    result: MediaIngestRun
    onboarding_id: str
    garden_id: str
    parts_before_resume: int
    events: list[ProgressEvent]  # what the resumed run reported (the CLI's bars show them)


@pytest.fixture(scope="module")
def resumed(media: Clips, server: str, s3) -> Resumed:
    """Run the flow in a child process, SIGKILL it mid-transcription, then run it again."""
    import prefect.settings

    root = s3.fresh_root("ingest")
    target = IngestTarget("talks", root, s3.storage_options)
    onboarding_id = media_id_of(media.onboarding.path)
    params = {
        "sources": [f"{server}/onboarding.mp3", f"{server}/garden.mp4"],
        "pack": "talks",
        "root": root,
        "transcribe": WINDOW,
        "chunking": CHUNKS,
    }
    env = (
        os.environ
        | s3.env
        | {
            "PREFECT_API_URL": prefect.settings.PREFECT_API_URL.value(),
            "PREFECT_LOGGING_LEVEL": "WARNING",
        }
    )
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(params)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    store = target.checkpoints()
    fp = TranscribeOptions(**WINDOW).fingerprint
    first_part = Keys.transcript_part(onboarding_id, fp, 0)
    deadline = time.monotonic() + 300
    while not store.exists(first_part):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            output = child.communicate()[0].decode(errors="replace")
            pytest.fail(f"the child run never stored a transcript part:\n{output[-3000:]}")
        time.sleep(0.1)
    os.kill(child.pid, signal.SIGKILL)  # a real crash: no cleanup, no flush
    child.wait()
    assert store.get_json(Keys.transcript_done(onboarding_id, fp)) is None, "killed too late"
    parts = len(store.list(f"{onboarding_id}/transcript/{fp}/"))
    events: list[ProgressEvent] = []
    with s3.environ(), listening(events.append):  # now AWS_* routes the Pack to moto
        result = ingest_media_flow(**params)
    return Resumed(target, result, onboarding_id, media_id_of(media.garden.path), parts, events)


def test_killed_run_resumes_without_duplicates_or_losses(resumed: Resumed):
    items = {row["media_id"]: row for row in resumed.result.items}
    onboarding = items[resumed.onboarding_id]
    assert onboarding["status"] == "resumed" and "download" in onboarding["reused_steps"]
    assert onboarding["resumed_parts"] == resumed.parts_before_resume >= 1
    store = resumed.target.checkpoints()
    fp = TranscribeOptions(**WINDOW).fingerprint
    parts = [store.get_json(k) for k in store.list(f"{resumed.onboarding_id}/transcript/{fp}/")]
    parts = sorted((p for p in parts if "index" in p), key=lambda p: p["index"])
    assert [p["index"] for p in parts] == list(range(len(parts))) and len(parts) == 2
    assert parts[0]["start_sample"] == 0
    assert parts[0]["end_sample"] == parts[1]["start_sample"]  # contiguous across the crash
    for media_id in (resumed.onboarding_id, resumed.garden_id):
        rows = pack_rows(resumed.target, media_id)
        assert items[media_id]["chunks"] == len(rows) >= 2
        assert [r["source_position"] for r in rows] == list(range(len(rows)))
        assert [r["id"] for r in rows] == [
            knowledge_id(f"media:{media_id}", i) for i in range(len(rows))
        ]


@pytest.mark.parametrize("clip", ["onboarding", "garden"])
def test_transcript_word_error_rate_is_low(resumed: Resumed, media: Clips, clip: str):
    media_id = resumed.onboarding_id if clip == "onboarding" else resumed.garden_id
    fp = TranscribeOptions(**WINDOW).fingerprint
    heard = " ".join(s.text for s in iter_segments(resumed.target.checkpoints(), media_id, fp))
    spoken: Spoken = getattr(media, clip)
    assert word_error_rate([spoken.text], [heard]) < MAX_WER, heard


def test_recall_finds_the_spoken_phrase_with_its_timestamps(resumed: Resumed, media: Clips):
    start, end = media.onboarding.when("forklift keys")
    options = dict(resumed.target.storage_options or {})
    with Pack.open("talks", resumed.target.root, storage_options=options) as pack:
        recall = pack.recall("Where are the keys for the forklift kept?", kind="knowledge")
    top = recall.items[0]
    assert top.source == f"media:{resumed.onboarding_id}" and top.title == "onboarding"
    assert "forklift" in top.text.lower()
    assert top.start_s is not None and top.end_s is not None
    # The chunk holds the whole sentence; Whisper's segment times are within ~1 s.
    assert top.start_s <= start + 1.0 and top.end_s >= end - 1.0
    assert top.end_s - top.start_s <= CHUNKS["target_s"] + 1.0


def test_a_second_run_finds_everything_done(resumed: Resumed, s3):
    params = {
        "pack": "talks",
        "root": resumed.target.root,
        "transcribe": WINDOW,
        "chunking": CHUNKS,
    }
    sources = [row["source"] for row in resumed.result.items]
    with s3.environ():
        again = ingest_media_flow(sources=sources, **params)
    assert [row["status"] for row in again.items] == ["up to date", "up to date"]
    assert all(row["written"] == 0 for row in again.items)
    assert [row["chunks"] for row in again.items] == [row["chunks"] for row in resumed.result.items]


def test_run_publishes_progress_and_summary_artifacts(resumed: Resumed):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        summaries = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[SUMMARY_KEY]))
        )
        progress = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_="ingest-%"))
        )
    assert summaries and any(resumed.onboarding_id in str(a.data) for a in summaries)
    bars = [a for a in progress if a.type == "progress"]
    assert bars and max(float(a.data) for a in bars) == 100.0


def test_transcription_reports_progress_by_audio_seconds(resumed: Resumed, media: Clips):
    """Bug: a media item's bar said "download" at 10 % for the whole transcription (the
    transcribe step reported only when a 300 s window ended), so an hour-long file looked
    stuck. Now the step reports as soon as it starts (where a resume starts), then segment
    by segment, in seconds of audio."""
    onboarding = [e for e in resumed.events if e.source.endswith("/onboarding.mp3")]
    heard = [e for e in onboarding if e.step == "transcribe" and e.fraction < 1]
    total = round(media.onboarding.duration_s)
    assert all(re.fullmatch(rf"\d+ of {total} s of audio", e.detail) for e in heard), heard
    assert 0.3 < heard[0].fraction < 0.9  # it starts where the killed run stopped
    within = [e for e in heard if heard[0].fraction < e.fraction < 0.99]
    assert len({e.fraction for e in within}) >= 2, [(e.fraction, e.detail) for e in heard]
    assert [e.fraction for e in heard] == sorted(e.fraction for e in heard)
