"""A due flush leaves the caller's path (issue 24): the recall that fills the buffer
returns without committing, the background thread writes it at once, and a buffer the
background can't keep up with is flushed by the caller (bounded)."""

from __future__ import annotations

import threading
import time

from packs import KnowledgeChunk, Pack
from packs.store import schemas
from tests.support.internals import services_of
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

SETTINGS = {"log_flush_rows": 12, "log_flush_seconds": 600.0, "k1": 5, "k2": 3, "delta": -1.0}


def test_a_due_flush_runs_on_the_background_thread(tmp_path):
    with Pack.open("bg", tmp_path, embedder=SeededEmbedder(), settings=SETTINGS) as pack:
        pack.add_knowledge([KnowledgeChunk(f"rule {i}", "rules.md", i) for i in range(20)])
        threads: list[str] = []
        append = storage_of(pack).append

        def spy(*args, **kwargs):
            threads.append(threading.current_thread().name)
            return append(*args, **kwargs)

        storage_of(pack).append = spy  # type: ignore[method-assign]
        for i in range(2):  # about 9 rows each: due at the second, under twice the limit
            pack.recall(f"question {i}")
        assert "MainThread" not in threads  # no recall committed on its own thread
        deadline = time.monotonic() + 10
        while storage_of(pack).count(schemas.EPISODES) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert storage_of(pack).count(schemas.EPISODES) >= 2
        assert threads and set(threads) == {"wolfie-flush"}


def test_the_caller_flushes_when_the_background_falls_behind(tmp_path):
    with Pack.open("bg", tmp_path, embedder=SeededEmbedder(), settings=SETTINGS) as pack:
        pack.add_knowledge([KnowledgeChunk(f"rule {i}", "rules.md", i) for i in range(20)])
        services = services_of(pack)
        stalled = services.background
        stalled._flush_if_due = lambda: None  # private: a stalled background thread is the test
        buffer = services.flusher._buffer  # private: the bound on the flusher's buffer is the test
        for i in range(5):
            pack.recall(f"question {i}")
            assert buffer.row_count() < 2 * SETTINGS["log_flush_rows"]
        assert storage_of(pack).count(schemas.EPISODES) >= 3  # written by the callers
