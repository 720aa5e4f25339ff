"""Near-duplicates remembered at the same instant: how many duplicates a burst leaves.

How to run (from the repo root, with the venv active)::

    python benchmarks/dedup_race.py                    # 3 processes, 6 clusters, 3 rounds
    python benchmarks/dedup_race.py --processes 8 --rounds 2

It prints a Markdown table and writes ``out/bench/dedup_race.json`` and
``out/bench/dedup_race.md``.

Each *cluster* is one situation written ``processes`` ways (a prefix or suffix added to
a base intent; every pair is checked to be above the Pack's ``dedup_threshold`` with the
real embedder, and a cluster that is not is reported and left out). Per round, on a fresh
Pack, three paths remember the same variants:

- *sequential*: one process remembers every variant, one after another (the reference:
  one memory per cluster);
- *burst, unsettled*: ``processes`` spawned processes, each holding one variant of every
  cluster, released together by a barrier, with the settling of races switched off
  (what ``remember`` did before issue 23);
- *burst, settled*: the same burst with ``remember`` as shipped
  (:mod:`packs.near_duplicates`).

Reported per path: duplicates left (memories beyond one per cluster) as the median over
rounds and the total, and the median ``remember`` latency.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.*

from packs import Pack
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.settings import PackSettings
from tests.support.remember_race import race

OUT = Path("out/bench")
BASES = [
    "Stock broke out while I was away from the desk",
    "Lost two trades in a row and felt the urge to win it back",
    "Earnings tomorrow and I hold a full position",
    "The nightly batch failed to recalculate mark-to-market values",
    "The boss fight in the ice cave keeps resetting at the second phase",
    "Learners skip the quiz at the end of the SCORM module",
]
WAYS = [
    "{}",
    "{} again",
    "Today: {}",
    "{}, as usual",
    "Note - {}",
    "{} (again)",
    "FYI {}",
    "{} today",
]
PATHS = ("sequential", "burst, unsettled", "burst, settled")


def clusters(processes: int) -> tuple[list[list[str]], list[str]]:
    """Variant lists whose every pair is above the dedup threshold, and those left out."""
    if processes > len(WAYS):
        raise SystemExit(f"--processes is at most {len(WAYS)}")
    threshold = PackSettings().dedup_threshold
    embedder = OnnxMiniLM()
    kept, dropped = [], []
    for base in BASES:
        variants = [way.format(base) for way in WAYS[:processes]]
        vectors = embedder.embed(variants)
        cosines = vectors @ vectors.T
        if float(cosines.min()) >= threshold:
            kept.append(variants)
        else:
            dropped.append(f"{base!r} (lowest pair cosine {float(cosines.min()):.3f})")
    return kept, dropped


def run_path(path: str, groups: list[list[str]], processes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root:
        with Pack.open("race", root) as pack:
            pack.remember("An unrelated memory", "so the table is not empty")
        if path == "sequential":
            plan = [[variant for group in groups for variant in group]]
        else:
            plan = [[group[i] for group in groups] for i in range(processes)]
        answers = race(root, plan, fold=path != "burst, unsettled")
        seconds = [s for results in answers for (_, _, s) in results]
        with Pack.open("race", root, read_only=True) as pack:
            intents = pack.query("memories")["intent_text"].to_list()
    left = [sum(intent in group for intent in intents) for group in groups]
    return {
        "duplicates": sum(n - 1 for n in left),
        "per_cluster": left,
        "remember_ms": 1000 * statistics.median(seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    groups, dropped = clusters(args.processes)
    runs: dict[str, list[dict[str, Any]]] = {path: [] for path in PATHS}
    for _ in range(args.rounds):
        for path in PATHS:  # interleaved: the machine's load falls on every path alike
            runs[path].append(run_path(path, groups, args.processes))
    rows = []
    for path in PATHS:
        duplicates = [r["duplicates"] for r in runs[path]]
        rows.append(
            {
                "path": path,
                "clusters": len(groups),
                "rounds": args.rounds,
                "duplicates_median": float(np.median(duplicates)),
                "duplicates_total": int(sum(duplicates)),
                "remember_ms_median": statistics.median(r["remember_ms"] for r in runs[path]),
            }
        )
    report = {"processes": args.processes, "dropped_clusters": dropped, "paths": rows, "runs": runs}
    lines = [
        f"Near-duplicate bursts: {args.processes} processes, {len(groups)} clusters, "
        f"{args.rounds} rounds (duplicates left = memories beyond one per cluster)",
        "",
        "| path | duplicates left (median per round) | total over rounds | remember ms (median) |",
        "|---|---|---|---|",
        *(
            f"| {r['path']} | {r['duplicates_median']:g} | {r['duplicates_total']} | "
            f"{r['remember_ms_median']:.0f} |"
            for r in rows
        ),
    ]
    if dropped:
        lines += ["", "Left out (a pair below the threshold): " + "; ".join(dropped)]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "dedup_race.json").write_text(json.dumps(report, indent=2))
    (OUT / "dedup_race.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
