"""Tasks of the eval flow: pin a Pack version, score an eval set, store and publish.

Each task takes simple values (Pack name, root, paths, versions) and opens its own
handle, so Prefect can hash inputs and retry transient storage faults.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import polars as pl
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from evals.eval_chart import eval_trend_png
from evals.eval_runs import read_eval_runs, write_eval_run
from evals.evalset import resolve_eval_set
from evals.health_chart import markdown_image
from evals.metrics import MetricResult
from evals.pack_eval import check_embedding, evaluate_pack, pin
from packs.pack import Pack
from tasks.retry import retry_transient


@task(name="pin-pack-version", retries=2, retry_delay_seconds=2, retry_condition_fn=retry_transient)
def pin_version_task(pack: str, root: str | None, version: int | None) -> int:
    """The ``memories`` version to score (the latest unless given); checks the embedder."""
    with Pack.open(pack, root, read_only=True) as handle:
        check_embedding(handle)
        return pin(handle, version)


@task(name="score-eval-set")
def score_task(
    pack: str, root: str | None, eval_set: str | None, version: int, ks: list[int], ragas: bool
) -> dict[str, Any]:
    """Score the eval set (a JSONL file, or a set stored with the Pack: by name, or its
    only one when ``eval_set`` is None) against the Pack checked out at ``version``."""
    with Pack.open(pack, root, read_only=True) as handle:
        loaded = resolve_eval_set(handle, eval_set)
        scored = evaluate_pack(handle, loaded, ks, version=version, ragas=ragas)
    return {
        "dataset": loaded.name,
        "dataset_digest": loaded.digest,
        "results": [asdict(r) for r in scored.results],
        "misses": [asdict(o) for o in scored.outcomes if not o.hit],
        "queries": len(scored.outcomes),
        "pack_version": scored.pack_version,
        "settings_version": scored.settings_version,
        "embedding": scored.embedding,
    }


@task(name="write-eval-run", retries=2, retry_delay_seconds=2, retry_condition_fn=retry_transient)
def write_eval_run_task(pack: str, root: str | None, scored: dict[str, Any], run_id: str) -> str:
    """Append the results to the Pack's ``eval_runs`` table (created on first use).

    The run id comes from the flow, so a retried write appends the same run id.
    """
    results = [MetricResult(**r) for r in scored["results"]]
    with Pack.open(pack, root, create=False) as handle:
        return write_eval_run(
            handle, results, dataset_digest=scored["dataset_digest"],
            settings_version=scored["settings_version"], embedding=scored["embedding"],
            run_id=run_id,
        )  # fmt: skip


@task(name="publish-eval-artifacts")
def publish_task(pack: str, scored: dict[str, Any], run_id: str) -> list[str]:
    """A table artifact of every metric and a Markdown summary with the missed queries."""
    key = _artifact_key(f"eval-{pack}-{scored['dataset']}")
    rows = [
        {"metric": r["metric"], "k": r["k"], "value": round(r["value"], 4),
         "queries": r["queries"], "higher_is_better": r["higher_is_better"]}
        for r in scored["results"]
    ]  # fmt: skip
    create_table_artifact(key=key, table=rows, description=f"Eval run {run_id} of Pack {pack!r}.")
    create_markdown_artifact(
        key=f"{key}-summary", markdown=summary_markdown(pack, scored, run_id),
        description=f"Eval run {run_id}: settings, headline metrics and missed queries.",
    )  # fmt: skip
    return [key, f"{key}-summary"]


@task(name="eval-history", retries=2, retry_delay_seconds=2, retry_condition_fn=retry_transient)
def eval_history_task(pack: str, root: str | None, dataset: str) -> list[dict[str, Any]]:
    """Every stored result of ``dataset`` on this Pack, oldest run first."""
    with Pack.open(pack, root, read_only=True) as handle:
        runs = read_eval_runs(handle)
    return runs.filter(runs["dataset"] == dataset).to_dicts()


@task(name="publish-eval-trend")
def publish_trend_task(pack: str, dataset: str, history: list[dict[str, Any]]) -> str:
    """A Markdown artifact with the trend chart of the headline metrics over runs."""
    key = _artifact_key(f"eval-{pack}-{dataset}-trend")
    runs = pl.DataFrame(history)
    count = runs["run_id"].n_unique()
    title = f"Eval set {dataset!r} on Pack {pack!r}: {count} run(s)"
    create_markdown_artifact(
        key=key, markdown=f"### {title}\n\n{markdown_image(eval_trend_png(runs, title), title)}\n",
        description=f"Headline metrics of every eval run of {dataset!r}, oldest first.",
    )  # fmt: skip
    return key


def summary_markdown(pack: str, scored: dict[str, Any], run_id: str, limit: int = 20) -> str:
    lines = [
        f"Pack **{pack}** at memories version {scored['pack_version']} (settings "
        f"v{scored['settings_version']}, {scored['embedding']}), eval set "
        f"**{scored['dataset']}** ({scored['queries']} queries), run `{run_id}`.",
        "",
        "| metric | k | value |",
        "|---|---|---|",
    ]
    lines += [
        f"| {r['metric']} | {r['k'] if r['k'] is not None else ''} | {r['value']:.3f} |"
        for r in scored["results"]
    ]
    misses = scored["misses"]
    lines += ["", f"{len(misses)} queries with no relevant item retrieved:", ""]
    lines += [f"- `{m['id']}`: {m['query']}" for m in misses[:limit]]
    if len(misses) > limit:
        lines.append(f"- ... and {len(misses) - limit} more")
    return "\n".join(lines)


def _artifact_key(text: str) -> str:
    """Prefect artifact keys hold lowercase letters, digits and dashes only."""
    key = "".join(c if c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in key.split("-") if part)[:100]
