"""The eval flow: score an eval set against a Pack pinned to one LanceDB version.

Pins the ``memories`` table version (the latest, or the one asked for), scores the eval
set with typed metrics, appends them to the Pack's ``eval_runs`` table and publishes
Prefect artifacts. ``load`` first adds a bundle (a corpus) to the Pack, so the committed
eval data runs with one command (``wolfie eval``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from prefect import flow

from tasks.eval_tasks import pin_version_task, publish_task, score_task, write_eval_run_task
from tasks.pack_tasks import load_bundle_task

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "data" / "evals" / "manpages"
DEFAULT_EVAL_SET = DEFAULT_DATA / "queries.jsonl"


@flow(name="wolfie-eval", log_prints=True)
def eval_flow(
    pack: str,
    root: str | None = None,
    eval_set: str = str(DEFAULT_EVAL_SET),
    ks: tuple[int, ...] = (1, 3, 5, 10),
    version: int | None = None,
    load: str | None = None,
    ragas: bool = True,
) -> dict[str, Any]:
    """Score ``eval_set`` against Pack ``pack``; returns the results and the run id."""
    if load is not None:
        load_bundle_task(pack, root, load)
    pinned = pin_version_task(pack, root, version)
    scored = score_task(pack, root, eval_set, pinned, list(ks), ragas)
    run_id = write_eval_run_task(pack, root, scored, uuid.uuid4().hex)
    artifacts = publish_task(pack, scored, run_id)
    return {**scored, "run_id": run_id, "artifacts": artifacts}
