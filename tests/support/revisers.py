"""A worker process for the concurrent-revision test (spawned, never forked).

Each worker opens the same Pack and revises one memory ``times`` times: one field only
it writes (``own``) and one field every worker writes (``metadata``), so revisions of
different fields and of the same field race.
"""

from __future__ import annotations

import os
from typing import Any


def revise_many(
    worker: str, name: str, root: str, memory_id: str, own: str, times: int
) -> list[dict[str, Any]]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from packs import Pack

    results = []
    with Pack.open(name, root) as pack:
        for i in range(times):
            change: dict[str, Any] = {own: f"{worker} {own} {i}"}
            result = pack.revise(memory_id, metadata={"by": worker, "i": i}, **change)
            results.append(result.to_dict())
    return results
