"""Pool the learning benchmark's runs over corpora: one paired interval per probe.

Per corpus the learning benchmark reports each lift with a paired bootstrap interval
over its questions; a small corpus decides little on its own (issue 41: "new >= 0 on
every corpus and seed" is a coin flip at 33-163 questions). This pools the questions of
several runs (``learning.json`` files that ``wolfie learn-bench`` wrote): each question's
lift over the never-rewarded Pack, averaged over the seeds, then one percentile bootstrap
over all of them (Efron and Tibshirani 1993), with the mean, the per-seed means and the
worst seed.

How to run (from the repository root)::

    python -m evals.learning_pool out/learn-bench/*/learning.json --method default
    python -m evals.learning_pool out/learn-bench/*/learning.json --against episode-credit
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evals.learning_config import BASELINE
from packs.errors import InvalidInput

PROBES = ("train", "paraphrases", "heldout")
RESAMPLES = 2000


def question_lifts(
    run_file: Path, method: str, probe: str, against: str = BASELINE
) -> tuple[np.ndarray, np.ndarray]:
    """(per question: lift over ``against`` averaged over seeds; per seed: mean lift) of
    one run file."""
    data = json.loads(run_file.read_text(encoding="utf-8"))
    by = {(r["method"], r["seed"]): r for r in data["runs"]}
    seeds = sorted({s for m, s in by if m == method})
    if not seeds:
        raise InvalidInput(f"{run_file} holds no run of method {method!r}.")
    diffs = []
    for seed in seeds:
        if (against, seed) not in by:
            raise InvalidInput(f"{run_file} holds no run of method {against!r}.")
        mine, base = by[(method, seed)]["hits"][probe], by[(against, seed)]["hits"][probe]
        diffs.append(np.array(mine, dtype=float) - np.array(base, dtype=float))
    stacked = np.array(diffs)
    return stacked.mean(axis=0), stacked.mean(axis=1)


def pooled(
    files: Sequence[Path], method: str, probe: str, against: str = BASELINE
) -> dict[str, Any]:
    """The pooled lift of ``probe`` over ``against`` (the never-rewarded Pack, or another
    method run beside it) in points: mean, 95 % interval, per-seed means."""
    per_question, per_seed = [], []
    for path in files:
        q, s = question_lifts(path, method, probe, against)
        per_question.append(q)
        per_seed.append((s, len(q)))
    d = np.concatenate(per_question)
    seeds = len(per_seed[0][0])
    seed_means = [
        float(sum(s[i] * n for s, n in per_seed) / sum(n for _, n in per_seed))
        for i in range(seeds)
    ]
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), (RESAMPLES, len(d)))].mean(axis=1)
    return {
        "questions": len(d),
        "mean": 100 * float(d.mean()),
        "low": 100 * float(np.quantile(means, 0.025)),
        "high": 100 * float(np.quantile(means, 0.975)),
        "seeds": [100 * m for m in seed_means],
        "worst_seed": 100 * min(seed_means),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.learning_pool", description=__doc__)
    parser.add_argument("files", type=Path, nargs="+", help="learning.json files to pool")
    parser.add_argument("--method", default="default")
    parser.add_argument(
        "--against", default=BASELINE, help="the method the lift is paired with (a run beside it)"
    )
    args = parser.parse_args(argv)
    print(
        f"Pooled over {len(args.files)} runs, method {args.method} against {args.against} "
        "(lift in points):"
    )
    print("| probe | questions | mean [95% CI] | per seed | worst seed |")
    print("|---|---|---|---|---|")
    for probe in PROBES:
        p = pooled(args.files, args.method, probe, args.against)
        seeds = " / ".join(f"{s:+.1f}" for s in p["seeds"])
        print(
            f"| {probe} | {p['questions']} | {p['mean']:+.1f} [{p['low']:+.1f}, {p['high']:+.1f}]"
            f" | {seeds} | {p['worst_seed']:+.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
