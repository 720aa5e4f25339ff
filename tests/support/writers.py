"""Worker processes for the concurrent-writers harness (spawned, never forked).

Each worker opens the same Pack, remembers memories (some intents shared with the other
workers, so merges race too), recalls a few episodes and then logs reward events until
it has written ``events`` of them. It returns what it wrote so the parent can check that
nothing was lost.
"""

from __future__ import annotations

import random
from typing import Any

SHARED_INTENTS = [
    "Stock broke out while I was away from the desk",
    "Lost two trades in a row and felt the urge to win it back",
    "Earnings tomorrow and I hold a full position",
]


def write_events(
    worker: int, name: str, root: str, storage_options: dict[str, str] | None, events: int
) -> dict[str, Any]:
    from packs import Pack

    rng = random.Random(worker)
    written = 0
    remembered: list[str] = []
    with Pack.open(name, root, storage_options=storage_options) as pack:
        for i, intent in enumerate(SHARED_INTENTS):
            remembered.append(pack.remember(intent, f"response {i} written by worker {worker}").id)
        for i in range(5):
            remembered.append(
                pack.remember(f"Worker {worker} private situation number {i}", f"answer {i}").id
            )
        episodes = [
            pack.recall(query).episode_id or ""
            for query in ("breakout while away", "losing streak", "earnings", "private situation")
        ]
        while written < events:
            episode = rng.choice(episodes)
            result = pack.feedback(episode, rng.uniform(-1, 1))
            written += result.applied
            if written + 3 > events:
                break
    return {"worker": worker, "events": written, "memories": remembered}
