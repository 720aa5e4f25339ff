"""Near-duplicates remembered at the same instant by three processes (issue 23).

Bug: three processes remembering near-duplicates at once stored three memories, where
remembering them one after another merges them into one (each process looked for a
near-duplicate before any of the others had committed). A created memory is now settled
against the latest version right after its commit (packs/near_duplicates.py).
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from packs import Pack
from packs.store import schemas as S
from tests.support.remember_race import remember_at_once

pytestmark = pytest.mark.slow

# Pairwise cosine 0.93-0.99 under all-MiniLM-L6-v2, above the default threshold 0.89.
VARIANTS = [
    "Stock broke out while I was away from the desk",
    "stock broke out while i was away from my desk",
    "The stock broke out while I was away from the desk",
]


def race(root: Path, per_process: list[list[str]]) -> list[list[tuple[str, str, float]]]:
    ctx = mp.get_context("spawn")
    barrier, outbox = ctx.Barrier(len(per_process)), ctx.Queue()
    workers = [
        ctx.Process(target=remember_at_once, args=(str(root), intents, barrier, outbox))
        for intents in per_process
    ]
    for worker in workers:
        worker.start()
    answers = [outbox.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    errors = [detail for status, detail in answers if status == "error"]
    assert not errors, errors[0]
    return [detail for _, detail in answers]


def test_three_processes_remembering_near_duplicates_store_one_memory(tmp_root: Path):
    with Pack.open("race", tmp_root) as pack:
        pack.remember("Earnings tomorrow and holding full size", "Halved the position")
    results = race(tmp_root, [[intent] for intent in VARIANTS])
    with Pack.open("race", tmp_root, read_only=True) as pack:
        stored = pack.query("memories")
        assert stored.height == 2  # the earnings memory and one breakout memory
        [kept] = [m for m in stored["id"].to_list() if pack.get(m)["intent_text"] in VARIANTS]
        assert {memory_id for [(memory_id, _, _)] in results} == {kept}  # every caller told so
        assert sorted(status for [(_, status, _)] in results) == ["created", "merged", "merged"]
        assert pack.get(kept)["merge_count"] == 2
        merged = pack.store.scan(S.MERGES, ["intent_text"], f"memory_id = '{kept}'")
        texts = [*merged["intent_text"].to_pylist(), pack.get(kept)["intent_text"]]
        assert sorted(texts) == sorted(VARIANTS)  # every variant's provenance kept
