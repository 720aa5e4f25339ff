"""Reports of the learning benchmark: a Markdown table, JSON and a PNG plot.

Rates are shares of questions whose top-k2 held a relevant item. Lift is in points over
the Pack without feedback (``no-feedback``) in the same seed, so the query order and the
reward plan are shared. Every cell is the mean over seeds with the min..max beside it.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evals.learning_config import BASELINE, METRICS, BenchConfig, BenchResult

LABELS = {"train": "train", "paraphrases": "paraphrases", "heldout": "held-out"}


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def points(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}"


def spread(values: list[float], fmt: Any = points) -> str:
    """``mean (min..max)``, or the single value for one seed."""
    clean = [v for v in values if not math.isnan(v)]
    if not clean:
        return "n/a"
    mean = statistics.fmean(clean)
    if len(clean) == 1:
        return fmt(mean)
    return f"{fmt(mean)} ({fmt(min(clean))}..{fmt(max(clean))})"


def summary(result: BenchResult) -> dict[str, dict[str, Any]]:
    """Per method: rates and lifts per seed, and their mean, min and max."""
    seeds = sorted({run.seed for run in result.runs})
    out: dict[str, dict[str, Any]] = {}
    for name in result.methods:
        entry: dict[str, Any] = {"seeds": seeds}
        for metric in METRICS:
            rates = [result.run(name, s).metric(metric) for s in seeds]
            lifts = [
                r - result.run(BASELINE, s).metric(metric)
                for r, s in zip(rates, seeds, strict=True)
            ]
            entry[metric] = _stats(rates)
            entry[f"{metric}_lift"] = _stats(lifts)
            entry[f"{metric}_ci"] = lift_interval(result, name, metric, seeds)
        out[name] = entry
    return out


def lift_interval(
    result: BenchResult, name: str, metric: str, seeds: list[int], resamples: int = 2000
) -> list[float] | None:
    """Paired bootstrap 95 % interval of a lift (percentile, Efron and Tibshirani 1993):
    each question's difference from the baseline, averaged over the seeds, resampled by
    question. None when the runs hold no per-question hits (a run from before issue 29)."""
    diffs = []
    for s in seeds:
        mine, base = result.run(name, s).hits.get(metric), result.run(BASELINE, s).hits.get(metric)
        if not mine or not base or len(mine) != len(base):
            return None
        diffs.append(np.array(mine, dtype=float) - np.array(base, dtype=float))
    d = np.mean(diffs, axis=0)
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), (resamples, len(d)))].mean(axis=1)
    return [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def interval(ci: list[float] | None) -> str:
    return "" if ci is None else f" [{points(ci[0])}, {points(ci[1])}]"


def _stats(values: list[float]) -> dict[str, Any]:
    clean = [v for v in values if not math.isnan(v)]
    return {
        "per_seed": values,
        "mean": statistics.fmean(clean) if clean else float("nan"),
        "min": min(clean) if clean else float("nan"),
        "max": max(clean) if clean else float("nan"),
        "std": statistics.pstdev(clean) if clean else float("nan"),
    }


def header(result: BenchResult, config: BenchConfig) -> str:
    ranking = (result.settings.get("default") or result.settings[BASELINE])["ranking"]
    seeds = ", ".join(str(x) for x in config.seeds)
    sizes = result.sizes
    return (
        f"{config.corpus.name}, {config.split} fold: {sizes['train']} training questions "
        f"(played), {sizes['paraphrases']} paraphrases of them and {sizes['heldout']} held-out "
        f"questions (never played); {result.chunks} chunks; "
        f"k1={ranking['k1']}, k2={ranking['k2']}; "
        f"{config.epochs} epochs; seeds {seeds}; feedback: {config.feedback.label}. "
        f"Ran in {result.seconds:.0f} s."
    )


def render_markdown(result: BenchResult, config: BenchConfig) -> str:
    table = summary(result)
    lines = [
        f"# Runtime-learning benchmark: {config.corpus.name}",
        "",
        header(result, config),
        "",
        "| method | train | paraphrases | held-out | train lift [95% CI] | paraphrase lift "
        "[95% CI] | held-out lift [95% CI] | held-out lift per seed |",
        "|---" * 8 + "|",
    ]
    for name, entry in table.items():
        rates = [spread(entry[m]["per_seed"], pct) for m in METRICS]
        if name == BASELINE:
            lifts = ["(baseline)"] * 3 + [""]
        else:
            lifts = [
                spread(entry[f"{m}_lift"]["per_seed"]) + interval(entry[f"{m}_ci"]) for m in METRICS
            ]
            lifts.append(" / ".join(points(v) for v in entry["heldout_lift"]["per_seed"]))
        lines.append(f"| {name} | " + " | ".join(rates + lifts) + " |")
    for name, by_probe in result.baselines.items():
        cells = [pct(by_probe[m]) for m in METRICS] + ["(no learning)", "", "", ""]
        lines.append(f"| {name} (library baseline) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Rates: share of questions with a relevant item in the top-k2, mean (min..max) over "
        "seeds. Train: the last epoch, online. Paraphrases and held-out: ranked after the "
        "last epoch without logging. Lift: points over no-feedback (the same Pack, never "
        "rewarded) in the same seed and query order, with a paired bootstrap 95 % interval "
        "over questions (each question's lift averaged over the seeds).",
    ]
    lines += [f"- {note}" for note in result.notes]
    for run in result.runs:
        if run.tuned:
            changes = "; then ".join(
                ", ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in c.items()
                )
                for c in run.tuned
            )
            lines.append(f"- {run.method}, seed {run.seed}: the Pack's tuning adopted {changes}.")
    return "\n".join(lines) + "\n"


def plot(result: BenchResult, path: Path) -> None:
    """Mean training success per epoch, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(figsize=(7, 4.2))
    for name in result.methods:
        curves = [run.train_by_epoch for run in result.runs if run.method == name]
        mean = [statistics.fmean(epoch) for epoch in zip(*curves, strict=True)]
        axes.plot(range(1, len(mean) + 1), mean, marker="o", label=name)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("epoch")
    axes.set_ylabel("training success (relevant item in top-k2)")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    axes.set_title("Runtime learning: training success per epoch (mean over seeds)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def to_json(result: BenchResult, config: BenchConfig) -> dict[str, Any]:
    return {
        "corpus": str(config.corpus),
        "eval_set": str(config.eval_set_path),
        "paraphrases": str(config.paraphrases_path),
        "split": config.split,
        "split_seed": config.split_seed,
        "validation_share": config.validation_share,
        "epochs": config.epochs,
        "seeds": list(config.seeds),
        "feedback": asdict(config.feedback),
        "sizes": result.sizes,
        "chunks": result.chunks,
        "seconds": round(result.seconds, 1),
        "summary": summary(result),
        "runs": [asdict(run) for run in result.runs],
        "settings": result.settings,
        "notes": result.notes,
        "baselines": result.baselines,
    }


def write_outputs(result: BenchResult, config: BenchConfig) -> list[Path]:
    """Write learning.md, learning.json and learning.png under ``config.out``."""
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "learning.md", out / "learning.json", out / "learning.png"]
    paths[0].write_text(render_markdown(result, config), encoding="utf-8")
    data = json.dumps(to_json(result, config), indent=2, default=str)
    paths[1].write_text(data + "\n", encoding="utf-8")
    plot(result, paths[2])
    return paths
