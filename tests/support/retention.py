"""Worker processes for the retention race (spawned, never forked): one maintains a
Pack with retention 0 in a loop, another serves recalls and rewards meanwhile."""

from __future__ import annotations

import time
import traceback
from datetime import timedelta
from typing import Any

from tests.support.storage import storage_of


def maintain_loop(root: str, seconds: float) -> dict[str, Any]:
    """Compact the tables a server reads and writes and drop every old version, again and
    again (what ``wolfie maintain`` does per table, without its index builds, so that the
    rounds come fast)."""
    from packs import Pack
    from packs.store import schemas

    rounds, errors = 0, []
    deadline = time.monotonic() + seconds
    with Pack.open("race", root) as pack:
        while time.monotonic() < deadline:
            try:
                for name in (schemas.REWARD_EVENTS, schemas.EPISODES, schemas.MEMORIES):
                    storage_of(pack).optimize(name, timedelta(0))
                rounds += 1
            except Exception as exc:  # noqa: BLE001 - a conflict with the server: counted
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
    return {"rounds": rounds, "errors": errors}


def serve_loop(root: str, seconds: float) -> dict[str, Any]:
    """Recall, reward and flush as a busy server does; every failed call is recorded."""
    from packs import Pack

    calls, failures = 0, []
    deadline = time.monotonic() + seconds
    with Pack.open("race", root) as pack:
        while time.monotonic() < deadline:
            calls += 1
            try:
                found = pack.recall(f"how do I rotate keys {calls % 7}")
                pack.feedback(found.episode_id, 1.0)
                pack.flush()
                pack.count()
            except Exception:  # noqa: BLE001 - what the server's caller would see
                failures.append(traceback.format_exc(limit=1)[-400:])
    return {"calls": calls, "failures": failures}
