"""add_knowledge writes what it adds (issue 24): unchanged chunks are neither embedded
nor rewritten, a changed chunk is updated in place, and two processes adding the same
chunks at once store each one once."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.synchronize import Barrier

from packs import KnowledgeChunk, Pack
from packs.store import schemas
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

CHUNKS = [
    KnowledgeChunk(f"Runbook step {i}: check gauge {i * 7}.", "runbook.md", i) for i in range(300)
]


def add_all(root: str, barrier: Barrier) -> None:
    """One worker: the same chunks as the other, batch after batch, each batch started
    at the same moment as the other's (so both find its chunks missing)."""
    with Pack.open("shared", root, embedder=SeededEmbedder()) as pack:
        for lo in range(0, len(CHUNKS), 30):
            barrier.wait(timeout=120)
            pack.add_knowledge(CHUNKS[lo : lo + 30])


def test_unchanged_chunks_cost_nothing_and_a_changed_one_is_updated(tmp_path):
    embedder = SeededEmbedder()
    with Pack.open("k", tmp_path, embedder=embedder) as pack:
        ids = pack.add_knowledge(CHUNKS)
        version, calls = storage_of(pack).latest_version(schemas.MEMORIES), embedder.calls
        assert pack.add_knowledge(CHUNKS) == ids
        # nothing embedded, nothing committed: the re-ingest read the stored texts only
        assert embedder.calls == calls
        assert storage_of(pack).latest_version(schemas.MEMORIES) == version
        edited = KnowledgeChunk("Runbook step 5: check the pressure gauge first.", "runbook.md", 5)
        assert pack.add_knowledge([*CHUNKS[:5], edited]) == ids[:6]
        assert pack.count(kind="knowledge") == len(CHUNKS)
        assert pack.get(ids[5])["intent_text"] == edited.text
        assert pack.get(ids[4])["intent_text"] == CHUNKS[4].text
        assert pack.search(edited.text, k=1).ids == [ids[5]]


def test_two_processes_adding_the_same_chunks_store_each_once(tmp_path):
    with Pack.open("shared", tmp_path, embedder=SeededEmbedder()) as pack:
        pack.add_knowledge(CHUNKS[:1])  # the Pack exists before the workers start
    ctx = mp.get_context("spawn")  # never fork a process holding Lance handles
    barrier = ctx.Barrier(2)
    workers = [ctx.Process(target=add_all, args=(str(tmp_path), barrier)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(600)
    assert [w.exitcode for w in workers] == [0, 0]
    with Pack.open("shared", tmp_path, embedder=SeededEmbedder()) as pack:
        memories = pack.query("knowledge")
        assert memories.height == len(CHUNKS)
        assert memories["id"].n_unique() == len(CHUNKS)
