"""Render the trend of a Pack's eval runs as a PNG, embeddable in a Prefect artifact.

One line per metric at its headline cutoff (the largest ``k`` stored for it), one point
per run, in run order. Every point carries a marker, so a single run already shows.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display: render to memory
import matplotlib.pyplot as plt
import polars as pl


def headline_series(runs: pl.DataFrame) -> dict[str, list[float | None]]:
    """``{"recall@10": [value per run, oldest first], ...}`` (None where a run lacks it)."""
    order = runs.group_by("run_id").agg(pl.col("at").min()).sort("at")["run_id"].to_list()
    series: dict[str, list[float | None]] = {}
    for metric in sorted(set(runs["metric"].to_list())):
        rows = runs.filter(pl.col("metric") == metric)
        ks = [k for k in rows["k"].to_list() if k is not None]
        k = max(ks) if ks else None
        chosen = rows.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
        by_run = dict(zip(chosen["run_id"].to_list(), chosen["value"].to_list(), strict=True))
        series[metric if k is None else f"{metric}@{k}"] = [by_run.get(r) for r in order]
    return series


def eval_trend_png(runs: pl.DataFrame, title: str) -> bytes:
    """The headline metrics of every run in ``runs`` (rows of ``eval_runs``), as PNG."""
    series = headline_series(runs)
    labels = (
        runs.group_by("run_id")
        .agg(pl.col("at").min())
        .sort("at")["at"]
        .dt.strftime("%m-%d %H:%M")
        .to_list()
    )
    figure, axis = plt.subplots(figsize=(8, 4.5))
    positions = list(range(1, len(labels) + 1))
    for name, values in series.items():
        axis.plot(
            positions, [float("nan") if v is None else v for v in values], marker="o", label=name
        )
    axis.set_xticks(positions, labels, rotation=30, ha="right", fontsize="small")
    axis.set_xlim(0.5, len(positions) + 0.5)
    axis.set_ylim(-0.02, 1.02)
    axis.set_ylabel("value (higher is better)")
    axis.set_xlabel("eval run")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()
