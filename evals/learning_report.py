"""Reports of the learning benchmark: a Markdown table, a PNG plot and JSON.

The first method is the baseline; every other method gets a row of differences in
percentage points. Success rates are shares of queries whose top-k2 held a relevant item.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals.learning_bench import BenchConfig, BenchResult, SweepRow


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def points(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f} pts"


def summary_rows(result: BenchResult) -> list[dict[str, Any]]:
    """Per method: last-epoch and cumulative train success, held-out before/after."""
    return [
        {
            "method": run.method,
            "train_before": run.train_before,
            "last_epoch_train": run.last_train,
            "cumulative_train": run.cumulative,
            "heldout_before": run.heldout_by_epoch[0],
            "heldout_after": run.heldout,
        }
        for run in result.runs
    ]


def render_markdown(result: BenchResult, config: BenchConfig) -> str:
    runs = result.runs
    epochs = len(runs[0].train_by_epoch)
    s = result.settings[runs[-1].method]
    lines = [
        f"# Runtime-learning benchmark: {config.corpus.name}",
        "",
        f"{result.chunks} chunks, {result.train} training and {result.heldout} held-out "
        f"queries, {epochs} epochs, seed {config.seed}; k1={s['k1']}, k2={s['k2']}, "
        f"α={s['alpha']}, λ={s['lam']} (learning methods), exploration bonus "
        f"{s['explore_bonus']}; rewards {config.rewards.hit:+g}/{config.rewards.miss:+g}. "
        f"Ran in {result.seconds:.0f} s.",
        "",
        "| method | " + " | ".join(f"epoch {e}" for e in range(1, epochs + 1))
        + " | last epoch (train) | cumulative (train) | held-out before | held-out after |",
        "|---" * (epochs + 5) + "|",
    ]  # fmt: skip
    for run in runs:
        lines.append(
            f"| {run.method} | " + " | ".join(pct(r) for r in run.train_by_epoch)
            + f" | **{pct(run.last_train)}** | {pct(run.cumulative)} "
            f"| {pct(run.heldout_by_epoch[0])} | **{pct(run.heldout)}** |"
        )  # fmt: skip
    base = runs[0]
    for run in runs[1:]:
        gains = zip(run.train_by_epoch, base.train_by_epoch, strict=True)
        lines.append(
            f"| {run.method} − {base.method} | "
            + " | ".join(points(a - b) for a, b in gains)
            + f" | **{points(run.last_train - base.last_train)}** "
            f"| {points(run.cumulative - base.cumulative)} "
            f"| {points(run.heldout_by_epoch[0] - base.heldout_by_epoch[0])} "
            f"| **{points(run.heldout - base.heldout)}** |"
        )  # fmt: skip
    lines += [
        "",
        "Epoch columns: success while playing the training queries (online, as MemRL's "
        "per-epoch success rate). Cumulative: share of training queries answered in at "
        "least one epoch. Held-out: queries never played, ranked without logging before "
        "training and after the last epoch.",
    ]
    return "\n".join(lines) + "\n"


def render_sweep(rows: Sequence[SweepRow]) -> str:
    lines = [
        "| setting | value | baseline last epoch | learner last epoch | Δ last epoch "
        "| Δ cumulative | Δ held-out |",
        "|---" * 7 + "|",
    ]
    for row in rows:
        b, u = row.baseline, row.learner
        lines.append(
            f"| {row.setting} | {row.value} | {pct(b.last_train)} | {pct(u.last_train)} "
            f"| {points(u.last_train - b.last_train)} | {points(u.cumulative - b.cumulative)} "
            f"| {points(u.heldout - b.heldout)} |"
        )
    return "\n".join(lines) + "\n"


def plot(result: BenchResult, path: Path) -> None:
    """Success rate against epoch: training (solid) and held-out (dashed) per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    for run in result.runs:
        epochs = range(1, len(run.train_by_epoch) + 1)
        (line,) = axes.plot(epochs, run.train_by_epoch, marker="o", label=f"{run.method} (train)")
        axes.plot(
            range(len(run.heldout_by_epoch)), run.heldout_by_epoch, linestyle="--",
            marker="s", color=line.get_color(), label=f"{run.method} (held-out)",
        )  # fmt: skip
    axes.set_xlabel("epoch (held-out: 0 = before training)")
    axes.set_ylabel("success rate (relevant item in top-k2)")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    axes.set_title("Runtime learning: success rate per epoch")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_outputs(
    result: BenchResult, config: BenchConfig, sweep_rows: Sequence[SweepRow] = ()
) -> list[Path]:
    """Write learning.json, learning.md and learning.png (and sweep.md) under ``out``."""
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    data = {
        "corpus": str(config.corpus),
        "eval_set": str(config.eval_set),
        "epochs": config.epochs,
        "seed": config.seed,
        "rewards": asdict(config.rewards),
        "summary": summary_rows(result),
        "runs": [asdict(run) for run in result.runs],
        "settings": result.settings,
        "train_queries": result.train,
        "heldout_queries": result.heldout,
        "chunks": result.chunks,
        "seconds": round(result.seconds, 1),
        "sweep": [
            {"setting": r.setting, "value": r.value, "baseline": asdict(r.baseline),
             "learner": asdict(r.learner)}
            for r in sweep_rows
        ],
    }  # fmt: skip
    paths = [out / "learning.json", out / "learning.md", out / "learning.png"]
    paths[0].write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(result, config), encoding="utf-8")
    plot(result, paths[2])
    if sweep_rows:
        paths.append(out / "sweep.md")
        paths[-1].write_text(render_sweep(sweep_rows), encoding="utf-8")
    return paths
