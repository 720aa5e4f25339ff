"""Tasks of the eval flow: pin a Pack version, score an eval set, store, read history.

Each task takes simple values (Pack name, root, paths, versions) and opens its own
handle, so Prefect can hash inputs and retry transient storage faults. The artifacts are
published by ``tasks/publish_eval.py``.
"""

from __future__ import annotations

import polars as pl
from prefect import task

from evals.eval_runs import dataset_runs, write_eval_run
from evals.pack_eval import ScoredEvalSet, pin_checked, score_eval_set
from packs.pack import Pack
from tasks.retry import TRANSIENT


@task(name="pin-pack-version", **TRANSIENT.task_options())
def pin_version_task(pack: str, root: str | None, version: int | None) -> int:
    """The ``memories`` version to score (the latest unless given); checks the embedder."""
    with Pack.open(pack, root, read_only=True) as handle:
        return pin_checked(handle, version)


@task(name="score-eval-set")
def score_task(
    pack: str, root: str | None, eval_set: str | None, version: int, ks: list[int], ragas: bool
) -> ScoredEvalSet:
    """Score the eval set (a JSONL file, or a set stored with the Pack: by name, or its
    only one when ``eval_set`` is None) against the Pack checked out at ``version``."""
    with Pack.open(pack, root, read_only=True) as handle:
        return score_eval_set(handle, eval_set, ks, version=version, ragas=ragas)


@task(name="write-eval-run", **TRANSIENT.task_options())
def write_eval_run_task(pack: str, root: str | None, scored: ScoredEvalSet, run_id: str) -> str:
    """Append the results to the Pack's ``eval_runs`` table (created on first use).

    The run id comes from the flow, so a retried write appends the same run id.
    """
    with Pack.open(pack, root, create=False) as handle:
        return write_eval_run(
            handle,
            scored.results,
            dataset_digest=scored.dataset_digest,
            settings_version=scored.settings_version,
            embedding=scored.embedding,
            run_id=run_id,
        )


@task(name="eval-history", **TRANSIENT.task_options())
def eval_history_task(pack: str, root: str | None, dataset: str) -> pl.DataFrame:
    """Every stored result of ``dataset`` on this Pack, oldest run first."""
    with Pack.open(pack, root, read_only=True) as handle:
        return dataset_runs(handle, dataset)
