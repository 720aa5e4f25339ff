"""Eight processes write to one Pack at once: nothing is lost, utilities equal the log.

Each worker logs about 1,000 reward events (spawned processes, docs/field-notes.md: never fork
a process holding Lance handles), on a local folder and on s3:// against moto.
"""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import pytest

from packs import Pack
from packs.store import schemas as S
from tests.support.writers import SHARED_INTENTS, write_events

WORKERS = 8
EVENTS = 1_000


def run_writers(root: str, options: dict[str, str] | None) -> list[dict]:
    with Pack.open("shared", root, storage_options=options) as pack:
        pack.remember("seed intent so the Pack exists", "seed response")
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:
        futures = [
            pool.submit(write_events, w, "shared", root, options, EVENTS) for w in range(WORKERS)
        ]
        return [f.result(timeout=1200) for f in futures]


def check(root: str, options: dict[str, str] | None, results: list[dict]) -> None:
    logged = sum(r["events"] for r in results)
    assert logged >= WORKERS * (EVENTS - 3)
    with Pack.open("shared", root, storage_options=options) as pack:
        events = pack.reward_log()
        assert events.height == logged  # no event lost
        assert events["event_id"].n_unique() == logged  # none duplicated
        report = pack.rebuild_utilities(write=False)
        assert report.changed == 0, report.drift  # each utility equals the rebuild
        memories = pack.query("memories")
        assert memories["id"].n_unique() == memories.height  # reads clean, no duplicate row
        shared = memories.filter(memories["intent_text"].is_in(SHARED_INTENTS))
        # every worker's first remember of a shared intent created or merged into one row
        assert shared.height <= len(SHARED_INTENTS) * WORKERS
        assert (
            int(memories["usage_count"].sum())
            == pack.query("retrievals").filter(pack.query("retrievals")["injected"]).height
        )  # no lost usage increment
        assert pack.count(S.EPISODES) == 4 * WORKERS
        merges = pack.query("items")["merge_count"].sum()
        remembered = sum(len(r["memories"]) for r in results)
        # every remember created a row, merged into one, or found itself already there
        assert memories.height - 1 + merges <= remembered
        print(
            f"concurrency {'s3' if root.startswith('s3://') else 'local'}: {WORKERS} processes, "
            f"{logged} reward events logged and read back, {remembered} remembers, "
            f"{report.memories} memories, every utility equal to the rebuild"
        )


@pytest.mark.slow
def test_eight_writers_on_a_local_folder(tmp_path):
    results = run_writers(str(tmp_path), None)
    check(str(tmp_path), None, results)


@pytest.mark.slow
@pytest.mark.s3
def test_eight_writers_on_s3(s3):
    root = s3.fresh_root("concurrent")
    results = run_writers(root, s3.storage_options)
    check(root, s3.storage_options, results)
