"""Media ingestion flow: URLs or files -> download -> transcribe -> chunk -> embed/upsert.

Each item runs as a chain of four tasks; items run concurrently on the flow's task
runner (threads by default; pass a Dask runner with :func:`with_dask` to spread them
over a cluster). An item that fails stops at its failing step; the others go on. The
run ends with a summary table artifact, and raises :class:`IngestFailed` naming every
failed item unless ``fail_on_error`` is False.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from prefect import Task, flow
from prefect.futures import PrefectFuture, wait
from prefect.states import State

from packs.errors import IngestFailed
from packs.ingest.policy import IngestPolicy
from packs.ingest.report import STEPS, ItemOutcome, failure_message, summary_row, totals
from packs.ingest.upsert import UPSERT_BATCH
from tasks.ingest_tasks import (
    chunk_task,
    download_task,
    prepare_pack_task,
    transcribe_task,
    upsert_task,
)
from tasks.publish_runs import progress_artifact_task, publish_media_ingest_task
from tasks.retry import TRANSIENT

P = ParamSpec("P")
R = TypeVar("R")
RETRY_DELAY_S = 5.0  # between retries of a transient fault, unless a run says otherwise


@dataclass(frozen=True)
class MediaIngestRun:
    """What ``wolfie-ingest-media`` returns: one summary row per item, and the totals
    (``packs/ingest/report.py`` documents their fields)."""

    pack: str
    root: str | None
    items: list[dict[str, Any]]
    totals: dict[str, Any]


@flow(name="wolfie-ingest-media", log_prints=True)
def ingest_media_flow(
    sources: list[str],
    pack: str,
    root: str | None = None,
    transcribe: dict[str, Any] | None = None,
    chunking: dict[str, Any] | None = None,
    work_dir: str | None = None,
    refresh: bool = False,
    batch_size: int = UPSERT_BATCH,
    retries: int = TRANSIENT.retries,
    retry_delay_s: float = RETRY_DELAY_S,
    fail_on_error: bool = True,
    scope: str | None = None,
    policy: IngestPolicy | None = None,
) -> MediaIngestRun:
    """Ingest ``sources`` (http(s) URLs or local files) into Pack ``pack`` under ``root``.

    ``transcribe`` and ``chunking`` are :class:`TranscribeOptions` and
    :class:`ChunkingOptions` as plain dicts; ``refresh`` downloads URLs again even if a
    previous run fetched them. Transient faults are retried ``retries`` times. ``scope``
    makes the chunks that user's or session's only; ``policy`` holds every source to an
    agent's allowlist and size limit (packs/ingest/policy.py).
    """
    started = time.perf_counter()
    retry = (retries, retry_delay_s)
    retrying(prepare_pack_task, *retry)(pack, root, transcribe, chunking)
    chains: list[tuple[str, list[PrefectFuture[Any]]]] = []
    for source in dict.fromkeys(sources):  # the same source twice is one item
        progress = progress_artifact_task(source)
        fetched = retrying(download_task, *retry).submit(
            pack, root, source, work_dir, refresh, progress, policy, return_state=False
        )
        heard = retrying(transcribe_task, *retry).submit(
            pack, root, fetched, transcribe, work_dir, progress, source, return_state=False
        )
        chunked = retrying(chunk_task, *retry).submit(
            pack, root, heard, chunking, return_state=False
        )
        stored = retrying(upsert_task, *retry).submit(
            pack, root, chunked, batch_size, progress, source, scope, return_state=False
        )
        chains.append((source, [fetched, heard, chunked, stored]))
    wait([future for _, futures in chains for future in futures])
    rows = [summary_row(outcome_of(source, futures)) for source, futures in chains]
    summary = totals(rows, time.perf_counter() - started)
    publish_media_ingest_task(pack, rows, summary)
    if summary["failed"]:
        print(failure_message(rows))
        if fail_on_error:
            raise IngestFailed(failure_message(rows))
    return MediaIngestRun(pack, root, rows, summary)


def retrying(step: Task[P, R], retries: int, delay_s: float) -> Task[P, R]:
    """``step`` with this run's retry policy (still for transient errors only)."""
    return step.with_options(retries=retries, retry_delay_seconds=delay_s)


def outcome_of(source: str, futures: list[PrefectFuture[Any]]) -> ItemOutcome:
    """The results of an item's finished steps, and the error of its failed one."""
    steps: dict[str, dict[str, Any]] = {}
    for step, future in zip(STEPS, futures, strict=True):
        state: State[Any] = future.state
        if state.is_completed():
            steps[step] = future.result().to_dict()
            continue
        if state.is_failed() or state.is_crashed():
            error = state.result(raise_on_failure=False)
            message = (
                f"{type(error).__name__}: {error}"
                if isinstance(error, BaseException)
                else (state.message or state.name)
            )
            return ItemOutcome(source, steps, step, message)
        return ItemOutcome(source, steps, step, f"did not run ({state.name})")
    return ItemOutcome(source, steps)


def with_dask(address: str | None = None, workers: int = 2) -> Any:
    """The media flow on a Dask cluster: the scheduler at ``address``, or a local one.

    A local cluster uses ``workers`` processes of one thread each (distributed starts
    them with spawn, never fork, so no Lance handle is inherited).
    """
    from prefect_dask import DaskTaskRunner

    runner: Any
    if address:
        runner = DaskTaskRunner(address=address)
    else:
        cluster = {"n_workers": workers, "threads_per_worker": 1, "processes": True}
        runner = DaskTaskRunner(cluster_kwargs=cluster)
    return ingest_media_flow.with_options(task_runner=runner)
