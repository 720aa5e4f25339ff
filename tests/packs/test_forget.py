"""Forgetting (issue 22): a forgotten user leaves no byte behind, on a folder and on moto S3,
while another user's rows and utilities stay as they were and a second process stops
returning the forgotten memory within seconds; unknown ids, bad filters and read-only
handles are refused; maintain-pack purges what a forget without purge left.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from typing import Any

import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidInput, ReadOnlyPack, UnknownEpisode, UnknownMemory
from tests.support.erasure import files_holding, versions_holding
from tests.support.forget_worker import recall_loop

MARKER = "Zebracorn"
QUERY = f"how do I reset the {MARKER} router after a firmware update"
WORKER_QUERY = "how do I reset the router after a firmware update"  # no marker: see below
STOPS_WITHIN_S = 5.0  # the bound for another process (the design bound is 2 s)


def _build(root: str, options: dict[str, str] | None) -> dict[str, Any]:
    """Alice's memory and queries carry the marker; Bob has his own memory; a shared one
    is rewarded in Alice's episode too. Everything is recalled, rewarded and flushed."""
    with Pack.open("erase", root, storage_options=options) as pack:
        alice = pack.remember(
            f"My {MARKER} router lost its settings after the firmware update",
            f"Hold the {MARKER} reset pin for ten seconds, then restore the saved profile",
            outcome=f"{MARKER} back online",
            scope="alice",
        ).id
        bob = pack.remember(
            "My modem drops the line every evening",
            "Swap the splitter and call the provider",
            scope="bob",
        ).id
        shared = pack.remember(
            "A router needs a firmware update", "Download it from the vendor, flash it by cable"
        ).id
        seen = pack.recall(QUERY, scope="alice")
        assert alice in seen.ids and shared in seen.ids
        pack.feedback(seen.episode_id or "", 1.0)
        bobs = pack.recall("the modem keeps dropping the line", scope="bob")
        assert bob in bobs.ids
        pack.feedback(bobs.episode_id or "", 1.0)
        pack.add_knowledge(
            KnowledgeChunk(f"Router manual section {i}: cables, lights and ports.", "manual.md", i)
            for i in range(30)
        )
        pack.flush()
        # One fragment per table: deleting one row of 34 leaves LanceDB's compaction (which
        # rewrites a fragment a tenth deleted) nothing to do; the purge's rewrite must.
        pack.upkeep.maintain()
        assert versions_holding(pack, MARKER)  # the marker is stored before the forget
        rows = {m: pack.get(m) for m in (bob, shared)}
    return {"alice": alice, "bob": bob, "shared": shared, "episode": seen.episode_id, "rows": rows}


def _run_forget_with_a_second_process(
    root: str, options: dict[str, str] | None, s3: Any = None
) -> None:
    made = _build(root, options)
    ctx = mp.get_context("spawn")
    outbox: Any = ctx.Queue()
    stop = ctx.Event()
    # The worker recalls in Alice's scope with a question without the marker: what it
    # asks after the forget is new data, kept (docs/forgetting.md).
    worker = ctx.Process(
        target=recall_loop, args=(root, options, WORKER_QUERY, "alice", made["alice"], outbox, stop)
    )
    worker.start()
    try:
        _next_until(outbox, lambda returned, indexed: returned and indexed, 300)
        with Pack.open("erase", root, storage_options=options) as pack:
            report = pack.forget(scope="alice", purge=True)
            forgotten_at = time.monotonic()
            assert report.memory_ids == (made["alice"],) and report.purged
            assert report.removed["memories"] == 1 and report.removed["episodes"] >= 1
            assert report.removed["reward_events"] == 1  # Alice's memory's; the shared one's stays
            _next_until(outbox, lambda returned, indexed: not returned and not indexed, 60)
            took = time.monotonic() - forgotten_at
            print(f"second process stopped returning the memory {took:.2f} s after forget")
            assert took <= STOPS_WITHIN_S
    finally:
        stop.set()
        worker.join(timeout=120)
        if worker.is_alive():
            worker.kill()
    with Pack.open("erase", root, storage_options=options) as pack:
        assert versions_holding(pack, MARKER) == []
        assert files_holding(pack, MARKER, s3) == []
        assert made["alice"] not in pack.search(QUERY, scope="alice").ids
        for memory_id, before in made["rows"].items():  # Bob's and the shared memory
            after = pack.get(memory_id)
            for column in ("utility", "confidence", "reward_count", "intent_text", "tags"):
                assert after[column] == before[column], (memory_id, column)
        assert pack.rebuild_utilities(write=False).changed == 0
        with pytest.raises(UnknownEpisode):  # Alice's episode went with her
            pack.feedback(made["episode"], 1.0)


def _next_until(outbox: Any, wanted: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            at, returned, indexed = outbox.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if at == "error":
            raise AssertionError(f"the worker failed:\n{returned}")
        if wanted(returned, indexed):
            return
    raise AssertionError(f"the worker never reported the wanted state within {timeout} s")


@pytest.mark.slow
def test_a_forgotten_scope_leaves_no_trace_on_a_folder(tmp_root):
    _run_forget_with_a_second_process(str(tmp_root), None)


@pytest.mark.slow
@pytest.mark.s3
def test_a_forgotten_scope_leaves_no_trace_on_s3(s3):
    _run_forget_with_a_second_process(s3.fresh_root("erase"), s3.storage_options, s3)


def test_maintain_purges_what_a_forget_without_purge_left(tmp_root):
    made = _build(str(tmp_root), None)
    with Pack.open("erase", tmp_root) as pack:
        report = pack.forget([made["alice"]])
        assert not report.purged and report.removed["memories"] == 1
        assert made["alice"] not in pack.search(QUERY, scope="alice").ids  # gone at once
        assert versions_holding(pack, MARKER)  # ... but older versions still hold it
        assert pack.query("forgotten", where={"purged_at": None}).height == 1
        done = pack.upkeep.maintain()
        assert done.purged == 1
        assert not [v for v in versions_holding(pack, MARKER) if v.startswith("memories")]
        assert pack.query("forgotten", where={"purged_at": None}).height == 0
        # the episode that asked with the marker was Alice's; forgetting her memory by id
        # keeps it (forget(scope=...) is what removes a user's questions)
        assert pack.query("episodes").height == 2


def test_forget_refuses_bad_input_and_forgets_nothing(pack):
    kept = pack.remember("Keep this", "It stays").id
    with pytest.raises(UnknownMemory, match="m_nope"):
        pack.forget([kept, "m_nope"])
    assert pack.get(kept)["id"] == kept  # the known id was not forgotten either
    bad: list[dict[str, Any]] = [
        {},
        {"memory_ids": "m_1"},
        {"memory_ids": []},
        {"memory_ids": [kept], "scope": "a"},
        {"where": {}},
        {"where": {"kind": object()}},
        {"where": {"scope": ""}},
        {"scope": ""},
        {"memory_ids": [kept], "purge": "yes"},
        {"where": ["kind"]},
    ]
    for kwargs in bad:
        with pytest.raises(InvalidInput):
            pack.forget(**kwargs)
    assert pack.count() == 1
    nothing = pack.forget(where={"source": "nowhere"})
    assert nothing.total == 0 and nothing.memory_ids == ()


def test_forget_where_matches_columns_and_metadata_safely(pack):
    a = pack.remember("Quote 'O''Brien' notes", "x", metadata={"project": "o'brien"}).id
    b = pack.remember("Other project notes", "y", metadata={"project": "other"}).id
    report = pack.forget(where={"project": "o'brien"})
    assert report.memory_ids == (a,)
    assert pack.get(b)["id"] == b
    with pytest.raises(UnknownMemory):
        pack.get(a)


def test_a_read_only_handle_refuses_to_forget(tmp_root):
    with Pack.open("ro", tmp_root) as pack:
        kept = pack.remember("Backups run nightly", "At 02:00").id
    with Pack.open("ro", tmp_root, read_only=True) as pack:
        with pytest.raises(ReadOnlyPack):
            pack.forget([kept])
        with pytest.raises(ReadOnlyPack):
            pack.supersede(kept)


def test_a_reward_after_a_forget_skips_the_forgotten_memory(pack):
    a = pack.remember("The build is red on main", "Revert the last merge").id
    b = pack.remember("The build is red on a branch", "Rebase it on main").id
    episode = pack.recall("the build is red")
    assert {a, b} <= set(episode.ids)
    pack.forget([a])
    result = pack.feedback(episode.episode_id or "", 1.0)
    assert set(result.track_records) == {b}
    pack.flush()
    assert set(pack.reward_log()["memory_id"].to_list()) == {b}
    assert pack.rebuild_utilities(write=False).changed == 0
