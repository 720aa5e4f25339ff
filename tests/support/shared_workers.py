"""Long-lived worker processes for the shared-learning tests (spawned, never forked).

Each worker holds one Pack handle for its whole life and answers commands from a queue,
as a web worker serving requests would: ``rank`` (the ids a search ranks, nothing
logged), ``punish`` (recall, then -1 to the top item, ``times`` times, then flush),
``recall`` (a logged episode, flushed, so others can reward it), ``reward`` (feedback
with an idempotency key, left buffered), ``flush``, ``add`` (a knowledge chunk) and ``stop``.
"""

from __future__ import annotations

import os
import traceback
from multiprocessing.queues import Queue
from typing import Any


def serve(
    name: str, root: str, options: dict[str, str] | None, inbox: Queue, outbox: Queue
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from packs import KnowledgeChunk, Pack

    try:
        with Pack.open("shared", root, storage_options=options) as pack:
            outbox.put((name, "ready", None))
            while True:
                command, args = inbox.get(timeout=600)
                if command == "stop":
                    break
                outbox.put((name, command, _run(pack, command, args, KnowledgeChunk)))
    except BaseException:  # noqa: BLE001 - report it to the test, which fails loudly
        outbox.put((name, "error", traceback.format_exc()))


def _run(pack: Any, command: str, args: dict[str, Any], chunk_type: Any) -> Any:
    if command == "rank":
        return pack.search(args["query"], k=3).ids
    if command == "punish":
        for _ in range(args["times"]):
            found = pack.recall(args["query"])
            if args["memory_id"] not in found.ids:  # punished out of the top k2 already
                break
            pack.apply_reward(
                found.episode_id,
                -1.0,
                source="explicit",
                signal="rating",
                memory_ids=[args["memory_id"]],
            )
        pack.flush()
        return None
    if command == "recall":
        found = pack.recall(args["query"])
        pack.flush()
        return {"episode_id": found.episode_id, "ids": found.ids}
    if command == "reward":
        result = pack.feedback(args["episode_id"], args["rating"], idempotency_key=args["key"])
        return {"applied": result.applied, "duplicate": result.duplicate}
    if command == "flush":
        pack.flush()
        return None
    if command == "add":
        return pack.add_knowledge([chunk_type(args["text"], args["source"], 0)])
    raise ValueError(f"unknown command {command!r}")


def recompute(root: str, env: dict[str, str]) -> dict[str, int]:
    """The scheduled recompute flow, in its own process as a worker runs it (S3 settings
    come from the environment there, as in a deployment)."""
    os.environ.update(env)
    from flows.learning import recompute_utilities

    report = recompute_utilities(pack="shared", root=root)
    get = report.get if isinstance(report, dict) else lambda key: getattr(report, key)
    return {"memories": int(get("memories")), "changed": int(get("changed"))}
