"""The eval flow: score an eval set against a Pack pinned to one LanceDB version.

Pins the ``memories`` table version (the latest, or the one asked for), scores the eval
set with typed metrics, appends them to the Pack's ``eval_runs`` table and publishes
Prefect artifacts: the metrics, the missed queries and a trend chart over every run of
that eval set. The eval set is a JSONL file, or one stored with the Pack
(``packs/eval_sets.py``; a bundle stores its own on load), so the ``eval-pack``
deployment runs nightly with no file on the worker. ``load`` first adds a bundle (a
corpus) to the Pack, so the committed eval data runs with one command (``wolfie eval``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from prefect import flow

from evals.pack_eval import DEFAULT_KS, ScoredEvalSet
from tasks.eval_tasks import eval_history_task, pin_version_task, score_task, write_eval_run_task
from tasks.pack_tasks import load_bundle_task
from tasks.publish_eval import publish_task, publish_trend_task


@dataclass(frozen=True)
class EvalRun:
    """What ``wolfie-eval`` returns: the scores, the stored run's id, the artifact keys."""

    scored: ScoredEvalSet
    run_id: str
    artifacts: list[str]


@flow(name="wolfie-eval", log_prints=True)
def eval_flow(
    pack: str = "demo",
    root: str | None = None,
    eval_set: str | None = None,
    ks: tuple[int, ...] = DEFAULT_KS,
    version: int | None = None,
    load: str | None = None,
    ragas: bool = True,
) -> EvalRun:
    """Score ``eval_set`` (a JSONL file, or the name of a set stored with the Pack; none:
    the Pack's stored set) against Pack ``pack``; returns the results and the run id."""
    if load is not None:
        load_bundle_task(pack, root, load)
    pinned = pin_version_task(pack, root, version)
    scored = score_task(pack, root, eval_set, pinned, list(ks), ragas)
    run_id = write_eval_run_task(pack, root, scored, uuid.uuid4().hex)
    artifacts = publish_task(pack, scored, run_id)
    history = eval_history_task(pack, root, scored.dataset)
    artifacts.append(publish_trend_task(pack, scored.dataset, history))
    return EvalRun(scored, run_id, artifacts)
