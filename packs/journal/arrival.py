"""An episode another process served: found at the table's latest version, and waited
for while it may still be on its way (issue 42).

Behind a load balancer the recall lands on one process and the reward on another. The
serving process buffers the episode and flushes it within its flush interval
(``flush.seconds``; a door's recall asks for a flush at once), and another handle may
read a table at a version up to :data:`VISIBILITY_LAG_S` old. So a lookup that misses
reads the table's latest version before it refuses, and a reward that arrives before
the episode landed waits for it, bounded at the flush interval plus the lag counted
from the moment the episode was made. That moment is in the id itself
(:func:`new_episode_id`: the first 48 bits are its milliseconds since the epoch), so an
id that is not one of these, or older than the bound, is refused at once, never waited
for, and one that claims a moment to come waits no longer than one made now.
"""

from __future__ import annotations

import re
import time
import uuid
from datetime import datetime

from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.tables import WRITER_CONSISTENCY

# Hand-set: a writer handle reads another's commits within its read consistency (1 s).
VISIBILITY_LAG_S = WRITER_CONSISTENCY.total_seconds()
POLL_S = 0.1  # hand-set: one manifest read a tenth of a second while waiting
_MINTED = re.compile(r"ep_([0-9a-f]{12})[0-9a-f]{20}")


def new_episode_id(now: datetime) -> str:
    """``ep_`` and 32 hex digits: the milliseconds of ``now`` (12), then random ones."""
    return f"ep_{int(now.timestamp() * 1000):012x}{uuid.uuid4().hex[12:]}"


def minted_at(episode_id: str) -> float | None:
    """When :func:`new_episode_id` made ``episode_id`` (seconds since the epoch); None
    for another id."""
    found = _MINTED.fullmatch(episode_id)
    return None if found is None else int(found.group(1), 16) / 1000


def stored(store: PackStore, episode_id: str) -> bool:
    """Whether ``episode_id`` is in ``episodes`` at the table's latest version."""
    if not store.has_table(schemas.EPISODES):
        return False
    store.latest_version(schemas.EPISODES)
    return store.count(schemas.EPISODES, f"id = {sql_literal(episode_id)}") > 0


def await_stored(store: PackStore, episode_id: str, flush_s: float) -> bool:
    """Wait, polling the latest version, until ``episode_id`` is stored or can no longer
    be on its way (made more than ``flush_s`` + :data:`VISIBILITY_LAG_S` ago); whether
    it is stored. Called without the handle's lock."""
    born, now = minted_at(episode_id), time.time()
    # a forged id minted in the future waits no longer than one minted now
    deadline = None if born is None else min(born, now) + flush_s + VISIBILITY_LAG_S
    while True:
        if stored(store, episode_id):
            return True
        left = -1.0 if deadline is None else deadline - time.time()
        if left <= 0:
            return False
        time.sleep(min(POLL_S, left))
