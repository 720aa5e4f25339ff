"""How long a tune takes: ``Pack.tuning.tune`` over a Pack of N logged episodes.

How to run (from the repo root)::

    python benchmarks/tune_bench.py                      # 100,000 episodes
    python benchmarks/tune_bench.py --episodes 20000     # smaller

A synthetic Pack is written straight through its storage gateway (the API would take an
hour to play 100,000 episodes): ``--episodes`` episodes over N/5 distinct questions, each
with a 15-candidate pool (similarity and BM25 logged) out of 20,000 memories, three
injected and rewarded +1 when the question's answer is among them, else -1. Then
``tune(dry_run=True)`` runs as ``wolfie tune --dry-run`` would: it reads the newest
20,000 episodes (``packs.tuning.logs.MAX_EPISODES``), fits and replays. It prints the
read and the fit times and writes ``out/bench/tune.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
from bench_storage import storage_of

from packs import Pack
from packs.store import schemas as S
from packs.tuning.fit import fit
from packs.tuning.logs import read_log

DIM = 384
MEMORIES = 20_000
POOL = 15


def write_pack(root: Path, episodes: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    questions = max(1, episodes // 5)
    qv = rng.standard_normal((questions, DIM)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    mv = rng.standard_normal((MEMORIES, DIM)).astype(np.float32)
    mv /= np.linalg.norm(mv, axis=1, keepdims=True)
    answer = rng.integers(0, MEMORIES, questions)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with Pack.open("bench", root) as pack:
        store = storage_of(pack)
        mem = S.memories_schema(DIM)
        rows = {name: [] for name in mem.names}
        now = datetime.now(UTC)
        for m in range(MEMORIES):
            for name in mem.names:
                rows[name].append(None)
            rows["id"][-1], rows["kind"][-1] = f"m{m}", S.KIND_KNOWLEDGE
            rows["intent_text"][-1], rows["intent_embedding"][-1] = f"chunk {m}", mv[m]
            for name in ("utility", "confidence"):
                rows[name][-1] = 0.0
            for name in ("usage_count", "reward_count", "merge_count"):
                rows[name][-1] = 0
            rows["created_at"][-1] = rows["updated_at"][-1] = now
            rows["tags"][-1] = []
        store.append(S.MEMORIES, pa.Table.from_pydict(rows, schema=mem))
        batch = 10_000
        for lo in range(0, episodes, batch):
            eps, logs, events = [], [], []
            for e in range(lo, min(episodes, lo + batch)):
                q = int(rng.integers(0, questions))
                cand = np.unique(np.concatenate([[answer[q]], rng.integers(0, MEMORIES, POOL - 1)]))
                rng.shuffle(cand)
                at = start + timedelta(seconds=e)
                injected = [f"m{c}" for c in cand[:3]]
                eps.append(
                    {
                        "id": f"e{e}",
                        "created_at": at,
                        "query_text": f"question {q}",
                        "query_embedding": qv[q],
                        "k1": 10,
                        "k2": 3,
                        "candidate_ids": [f"m{c}" for c in cand],
                        "injected_ids": injected,
                    }
                )
                for rank, c in enumerate(cand):
                    logs.append(
                        {
                            "episode_id": f"e{e}",
                            "item_id": f"m{c}",
                            "kind": S.KIND_KNOWLEDGE,
                            "phase_a_rank": rank,
                            "similarity": float(rng.uniform(0.3, 0.8)),
                            "lexical": float(rng.uniform(0, 10)),
                            "utility": 0.0,
                            "confidence": 0.0,
                            "z_similarity": 0.0,
                            "z_utility": 0.0,
                            "z_confidence": 0.0,
                            "bonus": 0.0,
                            "score": 0.0,
                            "injected": rank < 3,
                            "final_rank": rank if rank < 3 else None,
                            "created_at": at,
                        }
                    )
                value = 1.0 if f"m{answer[q]}" in injected else -1.0
                for seq, m in enumerate(injected):
                    events.append(
                        {
                            "event_id": f"r{e}-{seq}",
                            "idempotency_key": f"k{e}",
                            "episode_id": f"e{e}",
                            "memory_id": m,
                            "source": "feedback",
                            "signal": "rating",
                            "magnitude": None,
                            "value": value,
                            "weight": 1.0,
                            "alpha": 0.3,
                            "confidence_rate": 0.1,
                            "q_before": None,
                            "q_after": None,
                            "created_at": at,
                            "writer": "bench",
                            "seq": seq,
                        }
                    )
            store.append(S.EPISODES, pa.Table.from_pylist(eps, schema=S.episodes_schema(DIM)))
            store.append(S.RETRIEVAL_LOG, pa.Table.from_pylist(logs, schema=S.RETRIEVAL_LOG_SCHEMA))
            store.append(
                S.REWARD_EVENTS, pa.Table.from_pylist(events, schema=S.REWARD_EVENTS_SCHEMA)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("out/bench"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        write_pack(root, args.episodes)
        written = time.perf_counter() - t0
        with Pack.open("bench", root, read_only=True) as pack:
            t1 = time.perf_counter()
            log = read_log(storage_of(pack), DIM)
            t2 = time.perf_counter()
            found = fit(log, pack.settings, DIM)
            t3 = time.perf_counter()
            report = pack.tuning.tune(dry_run=True)
            t4 = time.perf_counter()
    result = {
        "episodes": args.episodes,
        "episodes_read": len(log),
        "write_s": round(written, 1),
        "read_s": round(t2 - t1, 2),
        "fit_s": round(t3 - t2, 2),
        "tune_dry_run_s": round(t4 - t3, 2),
        "reason": found.reason,
        "adopted": report.adopted,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tune.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
