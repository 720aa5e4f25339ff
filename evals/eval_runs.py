"""The Pack's ``eval_runs`` table: typed results written per run, read back as trends.

The table is created on first use (``pack.eval_sets.add_runs``), so Packs that are never
evaluated don't carry it. One row per :class:`~evals.metrics.MetricResult`; the rows of
one run share a ``run_id``. Writing is one append (one commit) per run.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import cast

import polars as pl

from evals.metrics import MetricResult
from packs.pack import Pack


def write_eval_run(
    pack: Pack,
    results: Sequence[MetricResult],
    *,
    dataset_digest: str | None = None,
    settings_version: int | None = None,
    embedding: str | None = None,
    run_id: str | None = None,
) -> str:
    """Append ``results`` as one run; returns its ``run_id``."""
    run_id = run_id or uuid.uuid4().hex
    rows = [
        {
            "run_id": run_id,
            "at": r.at,
            "metric": r.metric,
            "k": r.k,
            "value": r.value,
            "higher_is_better": r.higher_is_better,
            "queries": r.queries,
            "dataset": r.dataset,
            "dataset_digest": dataset_digest,
            "pack": r.pack or pack.name,
            "pack_version": r.pack_version,
            "settings_version": settings_version,
            "embedding": embedding,
        }
        for r in results
    ]
    pack.eval_sets.add_runs(rows)
    return run_id


def read_eval_runs(pack: Pack, run_id: str | None = None) -> pl.DataFrame:
    """Every stored result (or one run's), oldest first; empty when never evaluated."""
    frame = cast(pl.DataFrame, pl.from_arrow(pack.eval_sets.runs()))  # other handles' too
    if run_id is not None:
        frame = frame.filter(pl.col("run_id") == run_id)
    return frame.sort(["at", "metric", "k"])


def trend(frame: pl.DataFrame, metric: str, k: int | None) -> pl.DataFrame:
    """One metric at one cutoff over runs: at, run_id, dataset, pack_version, value."""
    chosen = frame.filter(pl.col("metric") == metric)
    chosen = chosen.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
    return chosen.select("at", "run_id", "dataset", "pack_version", "value").sort("at")


def dataset_runs(pack: Pack, dataset: str) -> pl.DataFrame:
    """Every stored result of eval set ``dataset`` on this Pack, oldest run first."""
    runs = read_eval_runs(pack)
    return runs.filter(pl.col("dataset") == dataset)
