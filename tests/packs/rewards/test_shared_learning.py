"""Learning is shared by every process that serves a Pack (issue 14 §1).

Three spawned, long-lived processes on one Pack, on a local folder and on moto S3: two
"web workers" holding a handle each, and the scheduled recompute flow. One worker's
punishment must change the other's ranking within seconds, a chunk added by a third
process must be found by both, and one idempotency key delivered to both workers must
be applied once.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from packs import KnowledgeChunk, Pack
from tests.support.shared_workers import recompute, serve

pytestmark = pytest.mark.slow

QUESTION = "how do I rotate the signing keys without downtime"
CHUNKS = [
    "Rotating signing keys: publish the new key, wait one cache period, then retire the old key.",
    "Key rotation without downtime needs both keys accepted during the overlap window.",
    "Signing keys live in the vault; rotation is logged in the audit trail.",
    "Downtime windows are announced a week ahead on the status page.",
    "TLS certificates renew automatically thirty days before expiry.",
    "The release train leaves every Tuesday; hotfixes may skip it.",
]
NEW_CHUNK = "Blue-green database migrations keep the old schema readable until cut-over."
SHARE_WITHIN_S = 2.0  # the target in issue 14: another process's next recall within 2 s


class Workers:
    def __init__(self, root: str, options: dict[str, str] | None) -> None:
        ctx = mp.get_context("spawn")
        self.outbox: Any = ctx.Queue()
        self.inboxes: dict[str, Any] = {}
        self.procs = []
        for name in ("a", "b"):
            inbox = ctx.Queue()
            proc = ctx.Process(target=serve, args=(name, root, options, inbox, self.outbox))
            proc.start()
            self.inboxes[name], self.procs = inbox, [*self.procs, proc]
        for _ in self.inboxes:
            self.next_reply()

    def next_reply(self) -> tuple[str, str, Any]:
        name, command, result = self.outbox.get(timeout=300)
        if command == "error":
            raise AssertionError(f"worker {name} failed:\n{result}")
        return name, command, result

    def ask(self, name: str, command: str, **args: Any) -> Any:
        self.inboxes[name].put((command, args))
        who, what, result = self.next_reply()
        assert (who, what) == (name, command)
        return result

    def close(self) -> None:
        for inbox in self.inboxes.values():
            inbox.put(("stop", {}))
        for proc in self.procs:
            proc.join(timeout=60)
            if proc.is_alive():
                proc.kill()


def _seed(root: str, options: dict[str, str] | None) -> None:
    with Pack.open("shared", root, storage_options=options) as pack:
        pack.add_knowledge([KnowledgeChunk(text, "runbook.md", i) for i, text in enumerate(CHUNKS)])


def _until(check: Any, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def run_shared(root: str, options: dict[str, str] | None, env: dict[str, str]) -> None:
    _seed(root, options)
    workers = Workers(root, options)
    try:
        top = workers.ask("b", "rank", query=QUESTION)[0]  # B's caches are warm now
        assert workers.ask("a", "rank", query=QUESTION)[0] == top

        # 1. A's punishment reaches B's next recall.
        workers.ask("a", "punish", query=QUESTION, memory_id=top, times=8)
        seconds = _until(lambda: workers.ask("b", "rank", query=QUESTION)[0] != top, 10)
        print(
            f"shared learning: B stopped ranking the punished chunk first {seconds:.2f} s "
            "after A's flush"
        )
        assert seconds <= SHARE_WITHIN_S + 1.0  # the target, plus a loaded 2-core machine

        # 2. Knowledge added by a third process (the recompute flow's process) is found
        # by both workers; the flow rebuilds utilities while they serve.
        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=ctx) as pool:
            with Pack.open("shared", root, storage_options=options) as third:
                third.add_knowledge([KnowledgeChunk(NEW_CHUNK, "migrations.md", 0)])
            flow = pool.submit(recompute, root, env)
            for name in ("a", "b"):
                _until(
                    lambda n=name: any(
                        "Blue-green" in t
                        for t in _texts(
                            root,
                            options,
                            workers.ask(
                                n, "rank", query="how do we migrate the database schema safely"
                            ),
                        )
                    ),
                    SHARE_WITHIN_S + 1.0,
                )
            report = flow.result(timeout=600)
        assert report["changed"] == 0  # the workers' stored utilities equal the replay

        # 3. One idempotency key, delivered to both workers before either flushed (a
        # webhook retried to another worker), is applied once.
        episode = workers.ask("a", "recall", query=QUESTION)
        for name in ("a", "b"):
            taken = workers.ask(
                name, "reward", episode_id=episode["episode_id"], rating=1.0, key="webhook-42"
            )
            assert taken["applied"] == len(episode["ids"])  # neither could know yet
        # 4. The same key on another caller's episode is another reward (issue 23: Bob's
        # "webhook-42" came back duplicate and was dropped).
        other = workers.ask("b", "recall", query=QUESTION)
        taken = workers.ask(
            "b", "reward", episode_id=other["episode_id"], rating=-1.0, key="webhook-42"
        )
        assert taken == {"applied": len(other["ids"]), "duplicate": False}
        for name in ("a", "b"):
            workers.ask(name, "flush")
    finally:
        workers.close()
    with Pack.open("shared", root, storage_options=options) as pack:
        keyed = pack.query("rewards", where={"idempotency_key": "webhook-42"})
        by_episode = keyed.group_by("episode_id").len()  # stored once, whoever took it
        assert dict(by_episode.iter_rows()) == {
            episode["episode_id"]: len(episode["ids"]),
            other["episode_id"]: len(other["ids"]),
        }
        assert pack.rebuild_utilities(write=False).changed == 0


def _texts(root: str, options: dict[str, str] | None, ids: list[str]) -> list[str]:
    with Pack.open("shared", root, storage_options=options, read_only=True) as pack:
        return [pack.get(i)["intent_text"] for i in ids]


def test_learning_is_shared_across_processes_on_a_folder(tmp_path):
    run_shared(str(tmp_path), None, {})


@pytest.mark.s3
def test_learning_is_shared_across_processes_on_s3(s3):
    run_shared(s3.fresh_root("shared"), s3.storage_options, s3.env)
