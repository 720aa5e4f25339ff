"""Publish tasks of the eval flow: the metrics table, the summary, the trend chart."""

from __future__ import annotations

import polars as pl
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from evals.eval_chart import eval_trend_png
from evals.health_chart import markdown_image
from evals.pack_eval import ScoredEvalSet
from tasks.artifacts import artifact_key

MISSES_SHOWN = 20


@task(name="publish-eval-artifacts")
def publish_task(pack: str, scored: ScoredEvalSet, run_id: str) -> list[str]:
    """A table artifact of every metric and a Markdown summary with the missed queries."""
    key = artifact_key("eval", pack, scored.dataset)
    rows = [
        {
            "metric": r.metric,
            "k": r.k,
            "value": round(r.value, 4),
            "queries": r.queries,
            "higher_is_better": r.higher_is_better,
        }
        for r in scored.results
    ]
    create_table_artifact(key=key, table=rows, description=f"Eval run {run_id} of Pack {pack!r}.")
    create_markdown_artifact(
        key=f"{key}-summary",
        markdown=summary_markdown(pack, scored, run_id),
        description=f"Eval run {run_id}: settings, headline metrics and missed queries.",
    )
    return [key, f"{key}-summary"]


@task(name="publish-eval-trend")
def publish_trend_task(pack: str, dataset: str, history: pl.DataFrame) -> str:
    """A Markdown artifact with the trend chart of the headline metrics over runs."""
    key = artifact_key("eval", pack, dataset, "trend")
    count = history["run_id"].n_unique()
    title = f"Eval set {dataset!r} on Pack {pack!r}: {count} run(s)"
    chart = markdown_image(eval_trend_png(history, title), title)
    create_markdown_artifact(
        key=key,
        markdown=f"### {title}\n\n{chart}\n",
        description=f"Headline metrics of every eval run of {dataset!r}, oldest first.",
    )
    return key


def summary_markdown(
    pack: str, scored: ScoredEvalSet, run_id: str, limit: int = MISSES_SHOWN
) -> str:
    lines = [
        f"Pack **{pack}** at memories version {scored.pack_version} (settings "
        f"v{scored.settings_version}, {scored.embedding}), eval set "
        f"**{scored.dataset}** ({scored.queries} queries), run `{run_id}`.",
        "",
        "| metric | k | value |",
        "|---|---|---|",
    ]
    lines += [
        f"| {r.metric} | {r.k if r.k is not None else ''} | {r.value:.3f} |" for r in scored.results
    ]
    misses = scored.misses
    lines += ["", f"{len(misses)} queries with no relevant item retrieved:", ""]
    lines += [f"- `{m.id}`: {m.query}" for m in misses[:limit]]
    if len(misses) > limit:
        lines.append(f"- ... and {len(misses) - limit} more")
    return "\n".join(lines)
