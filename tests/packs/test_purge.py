"""Purges that hold at scale (issue 31): every index rebuilt, late rows erased whenever
they land, the idempotency keys of a forgotten user's rewards gone, scope digests salted
per Pack, and one purge a minute per Pack."""

from __future__ import annotations

import multiprocessing as mp
import time
from datetime import timedelta

import pytest

from packs import KnowledgeChunk, Pack
from packs.store import schemas, tombstones
from packs.store.scopes import scope_digest
from tests.support.erasure import files_holding, versions_holding
from tests.support.late_rows import flush_late
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

MARKER = "Zebracorn"  # in Alice's metadata, question and idempotency key
SCOPE = "Quokkaville"  # Alice's scope: its name is text of hers too


def test_a_purge_rebuilds_every_index_and_strips_the_keys_of_a_forgotten_scope(tmp_path):
    """Bug: maintenance's LABEL_LIST index on memories.tags kept the forgotten scope's name
    and metadata values after forget(purge=True) (only a later maintain with retention 0
    removed them), and her reward events on shared memories kept their idempotency keys'
    text, where the docs promise ids and numbers only. Neither index was rebuilt: the
    purge knew "FTS", "BTREE" and "IVF_SQ", while LanceDB lists "LabelList" and "IvfSq"."""
    with Pack.open("idx", tmp_path, embedder=SeededEmbedder(16)) as pack:
        pack.add_knowledge(KnowledgeChunk(f"shared note {i}", "notes.md", i) for i in range(300))
        meta = {"scope": SCOPE, "project": MARKER}
        mine = pack.add_knowledge(
            KnowledgeChunk(f"{MARKER} note {i}", "mine.md", i, metadata=meta) for i in range(30)
        )
        for i in range(110):  # reward_events past the index threshold: its key BTREE
            episode = pack.recall(f"shared note {i}").episode_id or ""
            pack.feedback(episode, 1.0, idempotency_key=f"shared-{i}")
        hers = pack.recall(f"{MARKER} note about the shared notes", k=40, scope=SCOPE)
        assert set(hers.ids) - set(mine)  # a shared chunk is rewarded in her episode
        pack.feedback(hers.episode_id or "", 1.0, idempotency_key=f"{MARKER}-webhook-7")
        pack.upkeep.maintain(retention=timedelta(0), index_threshold=300)
        kinds = {kind for kind, _, _ in storage_of(pack).indexes(schemas.MEMORIES)}
        assert {"LabelList", "BTree", "IvfSq"} <= kinds
        assert {"BTree"} == {k for k, _, _ in storage_of(pack).indexes(schemas.REWARD_EVENTS)}
        assert files_holding(pack, MARKER) and files_holding(pack, SCOPE)

        report = pack.forget(scope=SCOPE, purge=True)

        assert report.purged and len(report.memory_ids) == 30
        assert files_holding(pack, MARKER) == [] and versions_holding(pack, MARKER) == []
        assert files_holding(pack, SCOPE) == [] and versions_holding(pack, SCOPE) == []
        kept = pack.query("rewards", where={"episode_id": hers.episode_id})
        assert kept.height >= 1  # her events on shared memories stay, as ids and numbers
        assert (kept["idempotency_key"] == kept["event_id"]).all()
        assert kinds == {kind for kind, _, _ in storage_of(pack).indexes(schemas.MEMORIES)}
        assert pack.search("shared note 5", k=1).items[0].text == "shared note 5"
        assert pack.rebuild_utilities(write=False).changed == 0


def _build(root: str) -> Pack:
    pack = Pack.open("late", root)
    pack.remember(f"My {MARKER} router lost its settings", "Hold the reset pin", scope="alice")
    pack.remember("A router needs a firmware update", "Flash it by cable")
    pack.flush()
    return pack


@pytest.mark.slow
def test_a_row_landing_after_the_purge_is_erased_by_the_next_maintain(tmp_root):
    """Bug: another process recalled in Alice's scope just before the forget and flushed
    just after the purge; its episodes, holding her question, stayed for good, since
    maintain purged only tombstones not yet marked purged."""
    pack = _build(str(tmp_root))
    ctx = mp.get_context("spawn")
    ready, go, outbox = ctx.Event(), ctx.Event(), ctx.Queue()
    query = f"how do I reset the {MARKER} router"
    worker = ctx.Process(
        target=flush_late, args=(str(tmp_root), "late", query, "alice", ready, go, outbox)
    )
    worker.start()
    try:
        assert ready.wait(timeout=300), outbox.get(timeout=1) if not outbox.empty() else ""
        assert pack.forget(scope="alice", purge=True).purged
        assert files_holding(pack, MARKER) == []  # her rows are gone, for now
        go.set()
        state, trace = outbox.get(timeout=300)
        assert state == "done", trace
    finally:
        go.set()
        worker.join(timeout=120)
    assert files_holding(pack, MARKER)  # the late episode landed after the purge
    pack.upkeep.maintain()  # default retention: a day of versions, yet the late row's go
    assert files_holding(pack, MARKER) == [] and versions_holding(pack, MARKER) == []
    assert pack.query("episodes").height == 0
    pack.close()


def test_a_flush_after_a_forget_writes_none_of_its_rows(tmp_root):
    """Bug: a handle looked for new tombstones at most once a second, so a flush right
    after another handle's forget wrote the forgotten scope's buffered episodes."""
    pack = _build(str(tmp_root))
    with Pack.open("late", tmp_root) as other:
        assert other.recall(f"reset the {MARKER} router", scope="alice").episode_id
        pack.forget(scope="alice")
        other.flush()  # within a second of the recall's look at the tombstones
    assert pack.query("episodes").height == 0
    pack.close()


def test_the_scope_digest_is_salted_per_pack(tmp_root):
    """Bug: the tombstone held an unsalted hash of the scope, so a guessed user id could be
    confirmed by hashing it."""
    digests = []
    for name in ("one", "two"):
        with Pack.open(name, tmp_root) as pack:
            pack.remember("Where is my bike", "Rack B", scope="alice")
            pack.forget(scope="alice")
            (stone,) = tombstones.read(storage_of(pack))
            digests.append(stone["scopes"][0])
            (salt,) = tombstones.forget_salts(storage_of(pack))
            assert stone["scopes"] == [scope_digest("alice", salt)]
    assert digests[0] != digests[1]
    assert scope_digest("alice", None) not in digests


def test_purges_are_bounded_per_pack_and_coalesce(tmp_root):
    """Bug: any caller could repeat a one-row forget(purge=True), and each call rewrote
    every tenant's text tables and dropped all time travel."""
    with Pack.open("bound", tmp_root, settings={"flush": {"purge_every_seconds": 2.0}}) as pack:
        facts = ["The vault code changes weekly", "Parking is on level two", "Lunch is at noon"]
        ids = [pack.remember(f"{fact} ({MARKER})", "x").id for fact in facts]
        first = pack.forget([ids[0]], purge=True)
        assert first.purged and first.purge_at is None
        rewrites = storage_of(pack).commits
        second = pack.forget([ids[1]], purge=True)
        third = pack.forget([ids[2]], purge=True)
        assert not second.purged and second.purge_at is not None
        assert third.purge_at == second.purge_at  # one queued run for both
        assert storage_of(pack).commits - rewrites < 20  # deletes and tombstones, no rewrite
        assert len(tombstones.pending(storage_of(pack))) == 2
        deadline = time.monotonic() + 30
        while tombstones.pending(storage_of(pack)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert tombstones.pending(storage_of(pack)) == []
        assert versions_holding(pack, MARKER) == []
