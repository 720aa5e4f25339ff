"""Named migrations (issue 43; packs/store/migrate.py): a Pack of each released schema
opens read-only as it is and writable upgraded, its data intact and every step recorded;
a second open applies nothing; processes upgrading one old Pack at once all succeed."""

from __future__ import annotations

import multiprocessing as mp
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from packs import Pack, Rating
from packs.probation import held_memories
from packs.store import migrate
from packs.store.gateway import PackStore
from packs.store.locations import locate
from tests.support.old_packs import ADDED, NEWEST, columns_of, cut_back, meta_of, open_at_once

INTENT = "The printer on floor 3 jams"
RESPONSE = "Use the tray 2 paper"
STEPS = [m.name for m in migrate.MIGRATIONS]
RECORDS = sorted(migrate.RECORD_PREFIX + n for n in STEPS)


def _old_pack(root: Path, version: int) -> dict[str, object]:
    """A Pack with a memory, a rewarded episode and a lesson-log row, cut back to schema
    ``version``; what it held."""
    with Pack.open("old", root) as pack:
        made = pack.remember(INTENT, RESPONSE).id
        episode = pack.recall("printer jams").episode_id
        assert episode is not None
        pack.reward(episode, Rating(1.0))
        failed = {"at": datetime.now(UTC), "memory_id": made, "writer": "t", "status": "failed"}
        pack.store_lessons([], [failed])
        pack.flush()
        held = {"id": made, "utility": pack.get(made)["utility"], "episode": episode}
        held["rows"] = {t: pack.count(t) for t in ("episodes", "retrieval_log", "reward_events")}
    cut_back(root, "old", version)
    return held


@pytest.mark.parametrize("version", range(1, NEWEST + 1))
def test_a_pack_of_each_schema_reads_as_it_is_then_upgrades_once(tmp_root, version):
    held = _old_pack(tmp_root, version)
    before, meta_version = meta_of(tmp_root, "old")
    assert not [k for k in before if k.startswith(migrate.RECORD_PREFIX)]
    assert before["schema_version"] == version
    shape = columns_of(tmp_root, "old")
    with Pack.open("old", tmp_root, read_only=True) as reader:  # read as it is, not migrated
        assert held["id"] in reader.search("printer jams").ids
        assert reader.get(held["id"])["intent_text"] == INTENT
        assert [v.event for v in reader.history(held["id"])] == ["remember"]
        assert [r.id for r in reader.memory_table.page().rows] == [held["id"]]
        assert reader.memory_table.page(status="held").rows == ()
    assert held_memories(PackStore(locate("old", tmp_root, None), read_only=True)) == []
    assert meta_of(tmp_root, "old")[1] == meta_version and columns_of(tmp_root, "old") == shape

    with Pack.open("old", tmp_root) as pack:  # writable: the missing steps, in order
        meta = meta_of(tmp_root, "old")[0]
        assert meta["schema_version"] == NEWEST
        assert sorted(k for k in meta if k.startswith(migrate.RECORD_PREFIX)) == RECORDS
        ran = [m.name for m in migrate.MIGRATIONS if meta[migrate.RECORD_PREFIX + m.name]["ran"]]
        assert ran == [m.name for m in migrate.MIGRATIONS if m.schema > version]
        columns = columns_of(tmp_root, "old")
        for later in range(version + 1, NEWEST + 1):
            added, tables = ADDED[later]
            assert set(tables) <= set(columns)
            assert all(set(c) <= columns[t] for t, c in added.items())
        row = pack.get(held["id"])
        assert (row["intent_text"], row["response_summary"]) == (INTENT, RESPONSE)
        assert row["utility"] == held["utility"] and row["held_at"] is None
        assert {t: pack.count(t) for t in held["rows"]} == held["rows"]  # type: ignore[attr-defined]
        soon = datetime.now(UTC) + timedelta(hours=1)
        later_id = pack.remember("Printer maintenance today", "Offline", expires_at=soon).id
        assert {held["id"], later_id} <= set(pack.recall("printer").ids)
        pack.revise(held["id"], response="Use the tray 2 paper, not tray 1")
        pack.flush()
    after, meta_version = meta_of(tmp_root, "old")
    with Pack.open("old", tmp_root):  # a second open applies nothing, writes no record
        pass
    assert meta_of(tmp_root, "old") == (after, meta_version)


def test_a_new_pack_records_every_step_and_migrating_it_writes_nothing(tmp_root):
    with Pack.open("new", tmp_root):
        pass
    meta, version = meta_of(tmp_root, "new")
    assert sorted(k for k in meta if k.startswith(migrate.RECORD_PREFIX)) == RECORDS
    store = PackStore(locate("new", tmp_root, None), read_only=False)
    assert migrate.pending(meta) == []
    assert migrate.migrate(store, meta["embedding"]["dim"], meta) == []
    assert meta_of(tmp_root, "new")[1] == version


def test_the_steps_are_ordered_by_schema_and_end_at_the_schema_version():
    schemas_of = [m.schema for m in migrate.MIGRATIONS]
    assert schemas_of == sorted(schemas_of) and schemas_of[-1] == NEWEST
    assert [int(n[1:4]) for n in STEPS] == list(range(1, len(STEPS) + 1))
    # a Pack that records only its schema version has the steps of that schema applied
    assert migrate.applied({"schema_version": 5}) == STEPS[:5]
    assert [m.name for m in migrate.pending({"schema_version": 5})] == STEPS[5:]


def test_the_loser_of_a_race_to_add_a_column_finds_it_added(tmp_root, monkeypatch):
    _old_pack(tmp_root, 5)
    loser = PackStore(locate("old", tmp_root, None), read_only=False)
    winner = PackStore(locate("old", tmp_root, None), read_only=False)
    fields = migrate.schemas.RETRIEVAL_LOG_FIELDS_6
    commit = loser._commit  # private: the race is between its check and its commit

    def racing(name, step, write):  # the winner commits between the loser's check and commit
        winner.add_columns(name, fields)
        return commit(name, step, write)

    monkeypatch.setattr(loser, "_commit", racing)  # private: the same race
    assert loser.add_columns("retrieval_log", fields) == ["placed_by", "propensity"]
    assert {"placed_by", "propensity"} <= columns_of(tmp_root, "old")["retrieval_log"]


def test_processes_upgrading_one_old_pack_at_once_all_succeed(tmp_root):
    _old_pack(tmp_root, 1)
    start = time.time() + 8  # each spawned process imports Wolfie first
    with mp.get_context("spawn").Pool(3) as pool:
        found = pool.starmap(open_at_once, [("old", str(tmp_root), start)] * 3)
    assert found == [RECORDS] * 3
    with Pack.open("old", tmp_root) as pack:
        assert pack.count() == 1 and pack.get(pack.search("printer").ids[0])["held_at"] is None


def test_upgrade_is_a_deprecated_alias_of_migrate(tmp_root):
    _old_pack(tmp_root, 5)
    store = PackStore(locate("old", tmp_root, None), read_only=False)
    with pytest.warns(DeprecationWarning, match="migrate"):
        assert migrate.upgrade(store, meta_of(tmp_root, "old")[0]["embedding"]["dim"], 5)
    assert sorted(k for k in meta_of(tmp_root, "old")[0] if k.startswith("migration:")) == RECORDS
