"""What slate credit costs a reward, and a recall: ``context.credit`` "slate" against
"episode" (MemRL's), side by side in one process.

How to run (from the repo root, with the venv active)::

    python benchmarks/credit_bench.py                  # 2,000 chunks, 600 rewarded recalls
    python benchmarks/credit_bench.py --rounds 3 --episodes 300

Two Packs hold the same chunks (random unit vectors through a table embedder, so the
model's time does not hide the difference) and play the same questions with the same
rewards; rounds alternate which Pack goes first. Per round it times, for each Pack, a
``feedback`` (the reward's cost: the ledger, the contextual index, the credit, and its
share of the batched flushes) and the ``recall`` after it (which reads the credited
evidence), and reports medians, p95, means (the flushes amortised) and the ratios slate /
episode. Issue 41's goal: credit adds at most 10 % to a reward's cost.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors

DIM = 64


class TableEmbedder(EmbeddingProvider):
    """``"text N"`` is a fixed random unit vector; a question near chunk N is ``"q N"``."""

    info = EmbeddingInfo("table", "table", "bench:credit", DIM)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        out = []
        for text in texts:
            kind, n = text.split()
            v = np.random.default_rng(int(n)).standard_normal(DIM)
            if kind == "q":
                v = v + 0.6 * np.random.default_rng(10_000 + int(n)).standard_normal(DIM)
            out.append(v / np.linalg.norm(v))
        return np.stack(out).astype(np.float32)


def play(pack: Pack, question: int, rng: np.random.Generator) -> tuple[float, float]:
    started = time.perf_counter()
    recall = pack.recall(f"q {question}")
    recalled = time.perf_counter()
    pack.feedback(recall.episode_id or "", 1.0 if rng.random() < 0.6 else -1.0)
    return recalled - started, time.perf_counter() - recalled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=2_000)
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    times: dict[str, dict[str, list[float]]] = {
        c: {"recall": [], "feedback": []} for c in ("slate", "episode")
    }
    with tempfile.TemporaryDirectory() as tmp:
        packs = {}
        for credit in ("slate", "episode"):
            settings = {"context.credit": credit, "tuning.auto": False, "lexical": "off"}
            pack = Pack.open(credit, Path(tmp), embedder=TableEmbedder(), settings=settings)  # type: ignore[arg-type]
            pack.add_knowledge(
                [KnowledgeChunk(f"text {i}", "bench.md", i) for i in range(args.chunks)]
            )
            packs[credit] = pack
        for r in range(args.rounds):
            order = ("slate", "episode") if r % 2 == 0 else ("episode", "slate")
            plan = np.random.default_rng(r).integers(0, args.questions, args.episodes)
            for credit in order:
                rng = np.random.default_rng(100 + r)
                for question in plan.tolist():
                    recall_s, feedback_s = play(packs[credit], question, rng)
                    times[credit]["recall"].append(recall_s)
                    times[credit]["feedback"].append(feedback_s)
        for pack in packs.values():
            pack.close()
    print(
        "| credit | recall p50 ms | recall p95 ms | recall mean ms "
        "| feedback p50 ms | feedback p95 ms | feedback mean ms |"
    )
    print("|---|---|---|---|---|---|---|")
    stats = {}
    for credit, parts in times.items():
        row = []
        for name in ("recall", "feedback"):
            values = sorted(parts[name])
            p50, p95 = statistics.median(values), values[int(0.95 * (len(values) - 1))]
            mean = statistics.fmean(values)  # flushes included: the amortised cost
            stats[(credit, name)] = p50
            stats[(credit, name + " mean")] = mean
            row += [f"{1000 * p50:.2f}", f"{1000 * p95:.2f}", f"{1000 * mean:.2f}"]
        print(f"| {credit} | " + " | ".join(row) + " |")
    for name in ("recall", "feedback"):
        ratio = stats[("slate", name)] / stats[("episode", name)]
        mean = stats[("slate", name + " mean")] / stats[("episode", name + " mean")]
        print(f"{name}: slate / episode p50 = {ratio:.2f}x, mean = {mean:.2f}x")


if __name__ == "__main__":
    main()
