"""Worker processes that remember near-duplicates at the same instant (spawned, never
forked): each opens the Pack, waits at a barrier shared with the others, then remembers
its intents one after another. Used by tests/packs/test_dedup_race.py and
benchmarks/dedup_race.py."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

RESPONSE = "Waited for the retest"  # what every near-duplicate intent answers


def remember_at_once(
    root: str,
    intents: list[str | tuple[str, str]],
    barrier: Barrier,
    outbox: Queue,
    fold: bool = True,
) -> None:
    """Remember each of ``intents`` (an intent, or an intent and its response) right after
    the barrier opens; put the results (id, status, seconds) or the traceback in
    ``outbox``. ``fold=False`` switches the settling of races off, to measure what it
    fixes (the benchmark's baseline)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import packs.remember_flow
    from packs import Pack

    if not fold:
        packs.remember_flow.settle = _unsettled  # type: ignore[attr-defined]
    try:
        with Pack.open("race", root) as pack:
            pack.search("warm up the model and the table handles")
            barrier.wait(timeout=300)
            results = []
            for item in intents:
                intent, response = (item, RESPONSE) if isinstance(item, str) else item
                started = time.perf_counter()
                result = pack.remember(intent, response)
                results.append((result.id, result.status, time.perf_counter() - started))
        outbox.put(("ok", results))
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails loudly
        outbox.put(("error", traceback.format_exc()))


def race(
    root: str,
    plan: list[list[str]] | list[list[tuple[str, str]]],
    fold: bool = True,
    timeout: float = 900,
) -> list[list[tuple[str, str, float]]]:
    """One spawned process per list of ``plan``, all released by one barrier: each one's
    results from :func:`remember_at_once`; a worker's traceback is raised."""
    ctx = mp.get_context("spawn")
    barrier, outbox = ctx.Barrier(len(plan)), ctx.Queue()
    workers = [
        ctx.Process(target=remember_at_once, args=(root, intents, barrier, outbox, fold))
        for intents in plan
    ]
    for worker in workers:
        worker.start()
    answers = [outbox.get(timeout=timeout) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    errors = [detail for status, detail in answers if status == "error"]
    if errors:
        raise RuntimeError(f"a racing process failed:\n{errors[0]}")
    return [detail for _, detail in answers]


def _unsettled(store: Any, memory_id: str, *args: Any) -> Any:
    from packs.near_duplicates import Settled

    return Settled(memory_id, None)
