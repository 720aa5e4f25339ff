"""Two processes revising one memory at once lose no acknowledged revision (issue 22):
every revision is in the history, and each field's versions chain from its first value
to the stored one (a revision that overwrote another unseen would break the chain)."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from packs import Pack
from packs.records import MemoryVersion
from tests.support.revisers import revise_many

TIMES = 6


def _chain(versions: Sequence[MemoryVersion], field: str, first: Any, last: Any) -> int:
    """Follow ``field`` from ``first`` through every version that changed it (in any
    order of their timestamps) to ``last``; return how many steps it took."""
    key = lambda value: json.dumps(value, sort_keys=True)  # noqa: E731
    changed = [v.changes[field] for v in versions if field in v.changes]
    steps = {key(change.old): change.new for change in changed}
    value, taken = first, 0
    while key(value) in steps:
        value, taken = steps.pop(key(value)), taken + 1
    assert not steps, f"{field}: versions off the chain (a lost revision): {steps}"
    assert value == last
    return taken


def test_two_processes_revising_one_memory_lose_nothing(tmp_root):
    root = str(tmp_root)
    with Pack.open("shared", root) as pack:
        memory_id = pack.remember("The nightly export times out", "Raise the timeout.").id
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        jobs = [
            pool.submit(revise_many, "A", "shared", root, memory_id, "outcome", TIMES),
            pool.submit(revise_many, "B", "shared", root, memory_id, "response", TIMES),
        ]
        results = [job.result(timeout=600) for job in jobs]
    assert all(r["status"] == "revised" for worker in results for r in worker)
    with Pack.open("shared", root, read_only=True) as reader:
        row = reader.get(memory_id)
        versions = reader.history(memory_id)[1:]
    assert row["outcome"] == f"A outcome {TIMES - 1}"
    assert row["response_summary"] == f"B response {TIMES - 1}"
    assert len(versions) == 2 * TIMES
    assert {v.version_id for v in versions} == {
        r["version"]["version_id"] for worker in results for r in worker
    }
    assert _chain(versions, "outcome", None, row["outcome"]) == TIMES
    assert _chain(versions, "response", "Raise the timeout.", row["response_summary"]) == TIMES
    assert _chain(versions, "metadata", {}, json.loads(row["metadata_json"])) == 2 * TIMES
