"""Near-duplicates remembered at the same instant by three processes (issue 23).

Bug: three processes remembering near-duplicates at once stored three memories, where
remembering them one after another merges them into one (each process looked for a
near-duplicate before any of the others had committed). A created memory is now settled
against the latest version right after its commit (packs/near_duplicates.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from packs import Pack
from packs.near_duplicates import _fold, raise_merge_count  # private: _fold's races, the test
from packs.store import schemas as S
from tests.support.packs import stored_rows
from tests.support.remember_race import race
from tests.support.storage import storage_of

pytestmark = pytest.mark.slow

# Pairwise cosine 0.93-0.99 under all-MiniLM-L6-v2, above the default threshold 0.89.
VARIANTS = [
    "Stock broke out while I was away from the desk",
    "stock broke out while i was away from my desk",
    "The stock broke out while I was away from the desk",
]


def test_three_processes_remembering_near_duplicates_store_one_memory(tmp_root: Path):
    with Pack.open("race", tmp_root) as pack:
        pack.remember("Earnings tomorrow and holding full size", "Halved the position")
    results = race(str(tmp_root), [[intent] for intent in VARIANTS])
    with Pack.open("race", tmp_root, read_only=True) as pack:
        stored = pack.query("memories")
        assert stored.height == 2  # the earnings memory and one breakout memory
        [kept] = [m for m in stored["id"].to_list() if pack.get(m)["intent_text"] in VARIANTS]
        assert {memory_id for [(memory_id, _, _)] in results} == {kept}  # every caller told so
        assert sorted(status for [(_, status, _)] in results) == ["created", "merged", "merged"]
        assert pack.get(kept)["merge_count"] == 2
        merged = storage_of(pack).scan(S.MERGES, ["intent_text"], f"memory_id = '{kept}'")
        texts = [*merged["intent_text"].to_pylist(), pack.get(kept)["intent_text"]]
        assert sorted(texts) == sorted(VARIANTS)  # every variant's provenance kept


def _racer(root: Path, intent: str, response: str) -> str:
    """A near-duplicate committed by a racing process that looked before ours committed
    (dedup off on its handle, so it creates a row without merging)."""
    with Pack.open("race", root) as racer:
        racer.configure(dedup_threshold=1.0)
        created = racer.remember(intent, response)
        racer.configure(dedup_threshold=0.89)
    assert created.status == "created"
    return created.id


def _settle(pack: Pack, memory_id: str) -> str:
    from packs.near_duplicates import settle
    from packs.store.gateway import VECTOR_COLUMN
    from packs.store.scopes import same_scope_clause

    [row] = storage_of(pack).get(S.MEMORIES, f"id = '{memory_id}'", [VECTOR_COLUMN])
    vector = np.asarray(row[VECTOR_COLUMN], dtype=np.float32)
    return settle(storage_of(pack), memory_id, vector, same_scope_clause(None), 0.89).memory_id


def test_a_use_of_a_memory_folded_meanwhile_counts_on_the_memory_it_was_folded_into(tmp_root):
    """CI caught it (8 writers on S3): a process recalled a racer in the instant before
    the racer folded itself into the winner, and its flushed use found no row."""
    with Pack.open("race", tmp_root) as first:
        winner = first.remember(VARIANTS[0], "Set an alert next time").id
    loser = _racer(tmp_root, VARIANTS[1], "set an alert next time")
    with Pack.open("race", tmp_root) as user, Pack.open("race", tmp_root) as settler:
        recalled = user.recall("stock broke out while away from the desk", k=2)
        assert {item.id for item in recalled.items} == {winner, loser}
        assert _settle(settler, loser) == winner  # folded before the user's flush
        user.flush()
        stored = user.query("memories")
        assert loser not in stored["id"].to_list()
        assert stored.filter(stored["id"] == winner)["usage_count"].to_list() == [2]
        injected = user.query("retrievals").filter(pl.col("injected")).height
        assert int(stored["usage_count"].sum()) == injected == 2  # no use lost


def test_a_racer_used_before_its_fold_deletes_stays(tmp_root):
    """The other order: the use is flushed after the settler read the racer unused, but
    before its delete. The delete takes only an unused row, so the racer stays with its
    use, and no merge is left claiming it was folded."""
    with Pack.open("race", tmp_root) as first:
        winner = first.remember(VARIANTS[0], "Set an alert next time").id
    loser = _racer(tmp_root, VARIANTS[1], "set an alert next time")
    with Pack.open("race", tmp_root) as user, Pack.open("race", tmp_root) as settler:
        rows = {r["id"]: r for r in stored_rows(settler, S.MEMORIES)}
        assert rows[loser]["usage_count"] == 0  # the settler's look: unused
        user.recall("stock broke out while away from the desk", k=2)
        user.flush()
        assert _fold(storage_of(settler), rows[winner], rows[loser]) is False
        stored = settler.query("memories")
        assert stored.filter(stored["id"] == loser)["usage_count"].to_list() == [1]
        assert (
            not storage_of(settler).has_table(S.MERGES) or storage_of(settler).count(S.MERGES) == 0
        )


def test_a_withdrawn_merge_counted_meanwhile_is_counted_out(tmp_root, monkeypatch):
    """CI caught it (8 writers on S3, merge counts one above the remembers): another
    writer raised the winner's merge_count while the fold's merge was logged, and the
    withdrawal left the count one high. The fold counts again after withdrawing."""
    from datetime import UTC, datetime

    with Pack.open("race", tmp_root) as first:
        winner = first.remember(VARIANTS[0], "Set an alert next time").id
    loser = _racer(tmp_root, VARIANTS[1], "set an alert next time")
    with Pack.open("race", tmp_root) as user, Pack.open("race", tmp_root) as settler:
        store = storage_of(settler)
        merge = store.merge

        def counted_in_between(name, *args, **kwargs):  # another writer counts after the log
            done = merge(name, *args, **kwargs)
            if name == S.MERGES:
                raise_merge_count(store, winner, 0, datetime.now(UTC))
            return done

        monkeypatch.setattr(store, "merge", counted_in_between)
        rows = {r["id"]: r for r in stored_rows(settler, S.MEMORIES)}
        user.recall("stock broke out while away from the desk", k=2)
        user.flush()
        assert _fold(storage_of(settler), rows[winner], rows[loser]) is False
        stored = settler.query("memories")
        assert stored.filter(stored["id"] == winner)["merge_count"].to_list() == [0]
