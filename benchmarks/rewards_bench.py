"""Reward benchmarks: event logging throughput, and the 1M-event replay against a loop.

How to run (from the repo root, with the venv active)::

    python benchmarks/rewards_bench.py                 # full: 1,000,000 events
    python benchmarks/rewards_bench.py --quick         # smoke run, 100,000 events

It prints a Markdown table and writes ``out/bench/rewards.json`` and
``out/bench/rewards.md``.

1. **Logging.** A Pack with real recalls: every ``feedback`` appends one reward event per
   injected memory. Events per second include the batched flushes; the fragment count of
   every table after the run shows the batching keeps it bounded.
2. **Replay.** ``N`` synthetic reward events (10,000 memories, mixed weights, shuffled)
   are stored in a real ``reward_events`` table, read back once, then replayed
   side by side, interleaved over ``--repeats`` rounds:
   *polars*: ``pl.from_arrow`` + :func:`packs.learning.replay.replay` (what ``rebuild_utilities``
   runs); *loop*: ``to_pylist`` + ``sorted`` + :func:`packs.learning.replay.replay_loop`, the plain
   Python implementation. Both produce every memory's utility and confidence; the script
   checks they agree within 1e-9 and reports medians and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
from bench_storage import storage_of

from packs import KnowledgeChunk, Pack
from packs.learning.replay import ORDER, replay, replay_loop
from packs.store import schemas as S

OUT = Path("out/bench")


def bench_logging(feedbacks: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as root, Pack.open("log", root) as pack:
        pack.add_knowledge(
            [
                KnowledgeChunk(f"Rule {i}: advice number {i} about topic {i % 17}.", "rules.md", i)
                for i in range(300)
            ]
        )
        episodes = [pack.recall(f"question about topic {i % 17}").episode_id for i in range(200)]
        pack.flush()
        started = time.perf_counter()
        events = 0
        for i in range(feedbacks):
            events += pack.feedback(episodes[i % len(episodes)], float(rng.uniform(-1, 1))).applied
        pack.flush()
        elapsed = time.perf_counter() - started
        fragments = {name: storage_of(pack).fragment_count(name) for name in S.all_schemas(384)}
        stored = pack.count(S.REWARD_EVENTS)
    if stored != events:
        raise SystemExit(f"lost reward events: logged {events}, stored {stored}")
    return {
        "feedback_calls": feedbacks,
        "events": events,
        "seconds": elapsed,
        "events_per_second": events / elapsed,
        "fragments": fragments,
    }


def synthetic_events(n: int, memories: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = np.array([f"m_{i:032x}" for i in range(memories)])
    rows = {
        "event_id": [f"rw_{i:032x}" for i in range(n)],
        "idempotency_key": [f"k{i}" for i in range(n)],
        "episode_id": [f"ep_{i // 3:032x}" for i in range(n)],
        "memory_id": ids[rng.integers(0, memories, n)],
        "source": ["explicit"] * n,
        "signal": ["rating"] * n,
        "magnitude": rng.uniform(-1, 1, n),
        "value": rng.uniform(-1, 1, n),
        "weight": rng.choice([1.0, 0.5, 0.2], n),
        "alpha": np.full(n, 0.3),
        "confidence_rate": np.full(n, 0.1),
        "q_before": np.zeros(n),
        "q_after": np.zeros(n),
        "created_at": [start + timedelta(microseconds=int(i)) for i in range(n)],
        "writer": rng.choice(["host-1-a", "host-2-b"], n),
        "seq": np.arange(n, dtype=np.int64),
    }
    table = pa.table(rows).cast(S.REWARD_EVENTS_SCHEMA)
    return table.take(rng.permutation(n))  # stored order is not replay order


def bench_replay(n: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root, Pack.open("replay", root) as pack:
        storage_of(pack).append(S.REWARD_EVENTS, synthetic_events(n, 10_000))
        started = time.perf_counter()
        # the columns rebuild_utilities() reads (every column, packs/learning/rebuild.py), for both
        arrow = storage_of(pack).scan(S.REWARD_EVENTS, S.REWARD_EVENTS_SCHEMA.names)
        read_s = time.perf_counter() - started
    times: dict[str, list[float]] = {"polars": [], "loop": []}
    result: dict[str, Any] = {}
    for _ in range(repeats):
        for path in ("polars", "loop"):  # interleaved, same data
            started = time.perf_counter()
            if path == "polars":
                result[path] = replay(pl.from_arrow(arrow))  # type: ignore[arg-type]
            else:
                rows = sorted(
                    arrow.to_pylist(),
                    key=lambda r: (r["memory_id"], r["created_at"], r["writer"], r["seq"]),
                )
                result[path] = replay_loop(rows)
            times[path].append(time.perf_counter() - started)
    worst = max(
        max(
            abs(r["utility"] - result["loop"][r["memory_id"]][0]),
            abs(r["confidence"] - result["loop"][r["memory_id"]][1]),
        )
        for r in result["polars"].iter_rows(named=True)
    )
    if worst > 1e-9:
        raise SystemExit(f"polars replay disagrees with the loop by {worst}")
    polars_s, loop_s = statistics.median(times["polars"]), statistics.median(times["loop"])
    return {
        "events": n,
        "memories": 10_000,
        "read_seconds": read_s,
        "polars_median_s": polars_s,
        "loop_median_s": loop_s,
        "ratio": loop_s / polars_s,
        "max_disagreement": worst,
        "repeats": repeats,
        "order": ORDER,
    }


def markdown(report: dict[str, Any]) -> str:
    log, rep = report["logging"], report["replay"]
    lines = [
        "| measure | value |",
        "|---|---|",
        f"| reward events logged (feedback calls) | {log['events']:,} ({log['feedback_calls']:,}) |",
        f"| logging throughput, flushes included | {log['events_per_second']:,.0f} events/s |",
        f"| fragments after logging (per table) | {log['fragments']} |",
        f"| replay of {rep['events']:,} events, polars (median of {rep['repeats']}) | {rep['polars_median_s']:.2f} s |",
        f"| same events, plain Python loop (median) | {rep['loop_median_s']:.2f} s |",
        f"| ratio loop / polars | {rep['ratio']:.1f}x |",
        f"| reading the events from LanceDB (shared by both) | {rep['read_seconds']:.2f} s |",
        f"| largest disagreement polars vs loop | {rep['max_disagreement']:.1e} |",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--feedbacks", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.events, args.feedbacks, args.repeats = 100_000, 500, 1
    report = {
        "logging": bench_logging(args.feedbacks),
        "replay": bench_replay(args.events, args.repeats),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "rewards.json").write_text(json.dumps(report, indent=2))
    text = markdown(report)
    (OUT / "rewards.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
