"""A second process whose flush is under way when another process forgets (spawned,
never forked): it recalls ``query`` in ``scope`` (the episode is buffered), starts its
flush, and holds the flush's first commit until ``go`` is set, so its rows land after
the other process's forget and purge. ``ready`` is set once the flush is in its commit.
What it reports on ``outbox``: "done", or "error" with a traceback.
"""

from __future__ import annotations

import os
import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

from tests.support.storage import storage_of


def flush_late(
    root: str, name: str, query: str, scope: str, ready: Event, go: Event, outbox: Queue
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from packs import Pack

    try:
        with Pack.open(name, root) as pack:
            pack.recall(query, scope=scope)  # buffered: not due for seconds
            store: Any = storage_of(pack)
            append = store.append

            def held(table: str, data: Any) -> None:
                ready.set()  # the flush read the tombstones already: none yet
                go.wait(timeout=300)
                append(table, data)

            store.append = held
            pack.flush()
            store.append = append
        outbox.put(("done", None))
    except BaseException:  # noqa: BLE001 - reported to the test, which fails loudly
        outbox.put(("error", traceback.format_exc()))
