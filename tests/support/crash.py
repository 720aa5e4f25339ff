"""Crash-and-resume driver: run a workload and SIGKILL the process at a planned write.

The parent test starts ``python -m tests.support.crash PLAN.json`` (a fresh interpreter:
spawn, never fork). The child installs a :class:`Trap` around the two places where
Wolfie writes (``CheckpointStore.put_bytes``/``put_file`` for ingestion checkpoints,
``PackStore._commit`` for every LanceDB commit), runs the workload through the real
code path and, at the planned write of the planned step, sends itself ``SIGKILL``:

- ``before``: the write never starts;
- ``after``: the write is stored, what follows it is not;
- ``during``: a timer fires ``delay_s`` after the write starts, so the kill lands inside
  the write or shortly after it.

Before dying the child appends a ``kill`` line to the plan's log, so the parent can check
that the kill happened where it was planned. The same trap, with no plan, counts the
writes of an uninterrupted reference run (in-process), which sets the range the trials
draw from.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MEDIA_STEPS = ("download", "transcribe", "chunk", "upsert")
LEARNING_STEPS = ("remember", "feedback", "recompute", "lessons", "health")
MODES = ("before", "during", "after")
# Prefect task names -> harness step names.
_TASK_STEPS = {
    "prepare-pack": "prepare",
    "download": "download",
    "transcribe": "transcribe",
    "chunk": "chunk",
    "embed-upsert": "upsert",
    "check-pack": "check",
    "rebuild-utilities": "recompute",
    "refresh-lessons": "lessons",
    "pack-health": "health",
}
MEDIA_CHUNKS = {"target_s": 5, "overlap_s": 0}  # the 9 s hello clip gives two chunks
MEDIA_BATCH = 1  # one chunk per upsert batch: a kill can land between batches
MEDIA_TRANSCRIBE = {"beam_size": 1}  # greedy decoding: the same path, in half the time

# Learning workload: memories to remember (the last is a near-duplicate of a base
# memory saying the same, so the merge path runs too: a different response would be a
# correction, issue 30), and ratings delivered with idempotency keys.
NEW_MEMORIES = (
    ("Gap down at the open on heavy volume", "Waited thirty minutes before any entry"),
    ("Position moved against me right after entry", "Cut it at the planned stop"),
    ("Friday afternoon and the market is thin", "Closed the day early"),
    ("Stock broke out while I was away from the desk!", "Waited for the retest, then entered."),
)
RATINGS = (1.0, -0.5, 0.8, 0.3, -1.0, 0.6, 0.9, -0.2)


@dataclass(frozen=True)
class KillPlan:
    """Where one trial kills its child: the ``nth`` write (1-based) of ``step``."""

    workload: str  # "media" or "learning"
    step: str
    nth: int
    mode: str  # one of MODES
    delay_s: float
    pack: str
    root: str
    log: str  # file the child appends its writes and its kill to
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def _current_step(phase: list[str]) -> str:
    if "prefect" in sys.modules:  # inside a flow, the running task names the step
        from prefect.context import TaskRunContext

        ctx = TaskRunContext.get()
        if ctx is not None:
            return _TASK_STEPS.get(ctx.task.name, ctx.task.name)
    return phase[0]


class Trap:
    """Counts Wolfie's writes per step; kills the process at the plan's write."""

    def __init__(self, plan: KillPlan | None = None) -> None:
        self.plan = plan
        self.counts: Counter[str] = Counter()
        self.phase = ["setup"]  # the workload's own phase, outside Prefect tasks
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def installed(self) -> Iterator[Trap]:
        from packs.ingest.checkpoints import CheckpointStore
        from packs.store.gateway import PackStore

        # Every commit of a Pack, whatever the write, goes through PackStore's one seam.
        commit = PackStore._commit  # private: the seam where a kill splits a Pack's writes
        saved = [
            (CheckpointStore, "put_bytes", CheckpointStore.put_bytes),
            (CheckpointStore, "put_file", CheckpointStore.put_file),
            (PackStore, "_commit", commit),
        ]
        for owner, name, real in saved:
            setattr(owner, name, self.wrapped(real, f"{owner.__name__}.{name}"))
        try:
            yield self
        finally:
            for owner, name, real in saved:
                setattr(owner, name, real)

    def wrapped(self, real: Callable[..., Any], what: str) -> Callable[..., Any]:
        def write(*args: Any, **kwargs: Any) -> Any:
            step = _current_step(self.phase)
            with self.lock:
                self.counts[step] += 1
                nth = self.counts[step]
            plan = self.plan
            if plan is None or (step, nth) != (plan.step, plan.nth):
                return real(*args, **kwargs)
            where = {"step": step, "nth": nth, "mode": plan.mode, "write": what}
            if plan.mode == "before":
                _die(plan, where)
            if plan.mode == "during":
                threading.Timer(plan.delay_s, _die, (plan, where)).start()
            result = real(*args, **kwargs)
            if plan.mode == "after":
                _die(plan, where)
            return result

        return write


def _die(plan: KillPlan, where: dict[str, Any]) -> None:
    with open(plan.log, "a") as log:
        log.write(json.dumps({"event": "kill", **where}) + "\n")
    os.kill(os.getpid(), signal.SIGKILL)


# --- workloads ---------------------------------------------------------------------------


def run_media(plan: KillPlan, trap: Trap) -> Any:
    """The media ingestion flow on one local clip (real faster-whisper tiny.en)."""
    from flows.ingest import ingest_media_flow

    trap.phase[0] = "flow"
    return ingest_media_flow(
        sources=[plan.params["source"]],
        pack=plan.pack,
        root=plan.root,
        transcribe=MEDIA_TRANSCRIBE,
        chunking=MEDIA_CHUNKS,
        batch_size=MEDIA_BATCH,
        work_dir=plan.params["work_dir"],
        retries=0,
    )


def run_learning(plan: KillPlan, trap: Trap) -> None:
    """Remember, deliver ratings (idempotency keys), then the three learning flows.

    Safe to run again from the start: a remembered memory is found by its id, a rating
    with a key already logged is skipped, and the flows rebuild from the logs.
    """
    from packs import Pack
    from tests.support.internals import services_of

    trap.phase[0] = "remember"
    with Pack.open(plan.pack, plan.root) as pack:
        # Flushes on this thread: a step's write count is then the same in every run (a
        # flush on the background thread no longer holds the caller back, issue 31, so
        # how many commits a burst of ratings takes would vary with the timing).
        services_of(pack).background.stop()
        for intent, response in NEW_MEMORIES:
            pack.remember(intent, response)
        trap.phase[0] = "feedback"
        episodes = plan.params["episodes"]
        for i, rating in enumerate(RATINGS):
            pack.feedback(episodes[i % len(episodes)], rating, idempotency_key=f"rating-{i}")
        pack.flush()
    from flows.learning import pack_health, recompute_utilities, refresh_lessons_flow

    trap.phase[0] = "flows"
    recompute_utilities(plan.pack, plan.root)
    refresh_lessons_flow(plan.pack, plan.root)
    pack_health(plan.pack, plan.root)


WORKLOADS: dict[str, Callable[[KillPlan, Trap], Any]] = {
    "media": run_media,
    "learning": run_learning,
}


def main(plan_file: str) -> None:
    from flows.runtime import configure_offline

    configure_offline()
    plan = KillPlan(**json.loads(Path(plan_file).read_text()))
    with Trap(plan).installed() as trap:
        WORKLOADS[plan.workload](plan, trap)
    # Reaching here means the planned write never came: the parent reports it.


if __name__ == "__main__":
    main(sys.argv[1])
