"""A second process serving a Pack while another one forgets (spawned, never forked).

It recalls ``query`` in ``scope`` every ``every`` seconds until ``stop`` is set, and
reports after each recall whether ``memory_id`` was among the results and whether its
handle's contextual index still holds it: ``(seconds since start, returned, indexed)``.
"""

from __future__ import annotations

import os
import time
import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any


def recall_loop(
    root: str,
    options: dict[str, str] | None,
    query: str,
    scope: str,
    memory_id: str,
    outbox: Queue,
    stop: Event,
    every: float = 0.2,
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from packs import Pack
    from tests.support.internals import services_of

    try:
        with Pack.open("erase", root, storage_options=options) as pack:
            learning: Any = services_of(pack).learning  # what the handle holds in memory
            start = time.monotonic()
            while not stop.is_set():
                found = pack.recall(query, scope=scope)
                outbox.put(
                    (
                        time.monotonic() - start,
                        memory_id in found.ids,
                        memory_id in learning.context,
                    )
                )
                time.sleep(every)
    except BaseException:  # noqa: BLE001 - reported to the test, which fails loudly
        outbox.put(("error", traceback.format_exc(), None))
