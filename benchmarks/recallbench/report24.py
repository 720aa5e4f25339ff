"""Markdown for issue 24's sections: e2e (recall against its limit, the tail), writes,
scopes (docs/recall.md and docs/ingestion.md quote it)."""

from __future__ import annotations

import statistics

from .e2e import TAGS, E2EResult
from .writes import ScopeResult, WriteResult


def _cells(s: object) -> str:
    return f"{s.p50_ms:.1f} / {s.p95_ms:.1f} / {s.p99_ms:.1f}"  # type: ignore[attr-defined]


def e2e_markdown(results: list[E2EResult]) -> list[str]:
    lines = [
        "## Recall with the default embedder against its limit, and the tail (issues 24, 31)",
        "",
        "ms p50 / p95 / p99; the slowest 5 % of recalls by what happened during them",
        "",
        "| rows | bare+scan | recall | search | **recall / limit p50** | recall p95 / p50 "
        "| **recall p99 / p50** | limit p95 / p50, p99 / p50 | slow 5 %: "
        + ", ".join(TAGS)
        + " | other 95 % |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        slow = ", ".join(f"{r.slow_tags[t]:.0%}" for t in TAGS)
        rest = ", ".join(f"{r.rest_tags[t]:.0%}" for t in TAGS)
        limit = f"{r.limit_p95_over_p50:.1f}x, {r.limit_p99_over_p50:.1f}x"
        lines.append(
            f"| {r.rows:,} | {_cells(r.paths['bare+scan'])} | {_cells(r.paths['recall'])} "
            f"| {_cells(r.paths['search'])} | **{r.recall_over_limit:.2f}x** | "
            f"{r.recall_p95_over_p50:.1f}x | **{r.recall_p99_over_p50:.1f}x** | {limit} | "
            f"{slow} | {rest} |"
        )
    lines += [
        "",
        "`bare+scan`: the bare int8 model on one thread plus an exact numpy scan (the limit); "
        "goal recall / limit <= 1.5; tail goal p99 <= 3x p50 at 100k (issue 31), beside the "
        "limit's own ratios on the same box at the same time.",
        "",
        "CPU time of each call on its own thread (ms p50 / p95 / p99: the work, without "
        "waiting for a core), and the scan's product on OpenBLAS's threads and on one:",
        "",
        "| rows | bare+scan CPU | recall CPU | search CPU | product, BLAS threads | "
        "product, one thread |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r.cpu:
            lines.append(
                f"| {r.rows:,} | {_cells(r.cpu['bare+scan'])} | {_cells(r.cpu['recall'])} | "
                f"{_cells(r.cpu['search'])} | {_cells(r.blas['blas threads'])} | "
                f"{_cells(r.blas['one thread'])} |"
            )
    lines.append("")
    return lines


def writes_markdown(results: list[WriteResult]) -> list[str]:
    lines = [
        "## 200 chunks into a large maintained Pack against a fresh one (issue 24)",
        "",
        "| rows | embedder | large s (median) | fresh s | **large / fresh** | re-add unchanged s |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        for label, ratio in r.ratio.items():
            med = {
                k: statistics.median(r.seconds[f"{label} {k}"]) for k in ("large", "fresh", "again")
            }
            lines.append(
                f"| {r.rows:,} | {label} | {med['large']:.2f} | {med['fresh']:.2f} | "
                f"**{ratio:.2f}x** | {med['again']:.2f} |"
            )
    lines += [
        "",
        f"Indexes of the large Pack: {', '.join(results[0].indexes) if results else ''}. "
        "Goal: large / fresh <= 3.",
        "",
    ]
    return lines


def scopes_markdown(r: ScopeResult) -> list[str]:
    lines = [
        f"## Scoped recall: {r.scopes:,} scopes x {r.per_scope:,} rows (issue 24)",
        "",
        "| path | ms p50 / p95 / p99 |",
        "|---|---:|",
    ]
    for name, s in r.paths.items():
        lines.append(f"| {name} | {_cells(s)} |")
    lines += [
        "",
        f"A scope's first search on a handle (its rows loaded): {_cells(r.cold)} ms. "
        f"**recall@k1 in a scope: {r.recall_at_k1:.3f}** (goal >= 0.95); goal p50 <= 60 ms. "
        f"Scope rows held: {r.scope_rows_cached:,}.",
        "",
    ]
    return lines
