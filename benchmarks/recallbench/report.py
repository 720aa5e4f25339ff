"""Markdown for every section of the recall benchmark (docs/recall.md quotes it)."""

from __future__ import annotations

from typing import Any

from .ann import AnnResult
from .embedding import EmbeddingResult
from .fragments import TABLES, FragmentResult
from .latency import PATHS, SizeResult
from .limit import PATHS as LIMIT_PATHS
from .limit import LimitResult
from .stats import LatencyStats


def _ms(stats: LatencyStats) -> str:
    return stats.cell()


def limit_markdown(results: list[LimitResult]) -> list[str]:
    lines = [
        "## Recall against the machine's limit (issue 16), ms p50 / p95",
        "",
        "| rows | " + " | ".join(LIMIT_PATHS) + " | **recall / scan p50** "
        "| **recall / (scan+bm25) p50** | search / scan "
        "| lancedb / scan | candidates = exact top-k1 | top-3 = exact top-3 "
        "| top-3, repeated query | build s "
        "| cache load s | cache MiB | RSS growth MiB |",
        "|---:|" + "---:|" * (len(LIMIT_PATHS) + 11),
    ]
    for r in results:
        cells = " | ".join(_ms(r.paths[p]) for p in LIMIT_PATHS)
        lines.append(
            f"| {r.rows:,} | {cells} | **{r.recall_over_scan:.2f}x** | "
            f"**{r.recall_over_hybrid:.2f}x** | "
            f"{r.search_over_scan:.2f}x | {r.lancedb_over_scan:.2f}x | "
            f"{r.candidates_agree:.3f} | {r.top3_agree:.3f} | {r.top3_agree_repeat:.3f} | "
            f"{r.build_s:.0f} | "
            f"{r.cache_load_s:.2f} | {r.cache_mib:.0f} | {r.rss_mib:.0f} |"
        )
    lines += [
        "",
        "`scan` is the limit: embed, then an exact numpy scan (`matrix @ q`, `argpartition`) "
        "of the same vectors read back from the table; `scan+bm25` adds a bm25s query over "
        "the same rows' text (hybrid Phase A's limit, issue 20). `recall` is `Pack.recall` with "
        "logging and the flushes it triggers; `search` ranks without logging; `lancedb` is "
        "LanceDB's flat cosine search (Phase A before the cache). Goals: recall / scan "
        "p50 <= 3, candidates >= 0.99, top-3 >= 0.95 (no feedback). Agreement is the "
        "mean share of the exact ids found: in each query's first timed recall, and in a "
        "search after it (the recall's uses lowered its items' exploration bonus: see "
        "docs/recall.md). "
        "`cache MiB` is what the cache holds (vectors, row ids, Phase B's columns); "
        "`RSS growth` is measured over the second search, which loads it.",
        "",
    ]
    return lines


def ann_markdown(r: AnnResult) -> list[str]:
    aside = " (cache forced aside)" if r.cache_forced_aside else ""
    lines = [
        f"## {r.rows:,} rows with maintenance's vector index, the cache standing aside{aside}",
        "",
        f"Build {r.build_s:.0f} s; maintain {r.index_s:.0f} s ({', '.join(r.indexes)}). "
        f"RSS: {r.rss_mib:,.0f} MiB for opening the Pack and searching, "
        f"**{r.rss_mib_per_million:,.0f} MiB per million rows** (the exact scan's matrix, "
        f"{r.scan_mib:,.0f} MiB, loaded after); after every timed query, less that matrix: "
        f"{r.rss_mib_after:,.0f} MiB.",
        "",
        "| path | ms p50 / p95 | recall@k1 |",
        "|---|---:|---:|",
    ]
    for name, stats in r.paths.items():
        lines.append(f"| {name} | {_ms(stats)} | {r.recall_at_k1[name]:.3f} |")
    if r.tail_search is not None:
        lines += [
            "",
            f"Rows added after the index: {r.tail_rows} chunks through `add_knowledge` "
            f"({r.tail_add_s:.1f} s); {r.tail_unindexed} rows outside the index; each "
            f"searched with its own text: **{r.tail_found:.3f} found at rank 1 at once** "
            f"(search {_ms(r.tail_search)} ms p50 / p95); after another `maintain` "
            f"{r.tail_unindexed_after_maintain} un-indexed, {r.tail_found_after_maintain:.3f} "
            "found.",
        ]
    return [*lines, ""]


def embedding_markdown(r: EmbeddingResult) -> list[str]:
    bare = ", ".join(f"{x:.1f}" for x in r.bare_chunks_per_s)
    pack = ", ".join(f"{x:.1f}" for x in r.pack_chunks_per_s)
    return [
        "## Query embedding and ingestion (all-MiniLM-L6-v2 int8 ONNX)",
        "",
        "| query embedding | ms p50 / p95 |",
        "|---|---:|",
        f"| the model, one query | {_ms(r.query_model)} |",
        f"| a repeated query through the Pack's cache | {r.query_cached.p50_ms:.4f} / "
        f"{r.query_cached.p95_ms:.4f} |",
        "",
        f"Ingestion of chunks of {r.chunk_chars:.0f} characters on average, chunks/s per "
        f"run: bare `embedder.embed` {bare}; `Pack.add_knowledge` {pack}. "
        f"**add_knowledge / bare (medians): {r.ingest_ratio:.2f}x** (goal >= 0.9).",
        "",
    ]


def latency_markdown(sizes: list[SizeResult]) -> list[str]:
    lines = [
        "## Latency, ms p50 / p95",
        "",
        "| rows | embed | raw | raw_select | search | recall | search_global | recall_global "
        "| recall/raw p50 | recall_global/raw p50 | recall/raw p95 | recall/raw_select p50 "
        "| memories with history |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sizes:
        cells = " | ".join(_ms(s.paths[n]) for n in PATHS)
        lines.append(
            f"| {s.rows:,} | {cells} | **{s.ratio_p50:.2f}x** | {s.ratio_global_p50:.2f}x "
            f"| {s.ratio_p95:.2f}x | {s.ratio_select_p50:.2f}x | {s.context_memories:,} |"
        )
    lines += [
        "",
        "The earlier goal: recall p50, logging included, at most 1.5x raw p50. `raw` is the embedding "
        "plus `table.search(vec).distance_type('cosine').limit(k1).to_arrow()` (every "
        "column); `raw_select` reads only Phase A's columns; `search` is Phase A + B "
        "without logging; `recall` adds episode logging and the flushes it triggers. Both "
        "rank with the Pack default, contextual utility, after `--train-recalls` rewarded "
        "recalls gave memories a history; `search_global` and `recall_global` are a second "
        "handle on the same tables with `utility_mode='global'` (plain MemRL).",
        "",
        "| rows | build s | recalls without a commit | recalls that flushed (n) "
        "| commits in the loop | feedback after the loop |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sizes:
        lines.append(
            f"| {s.rows:,} | {s.build_s:.0f} | {_ms(s.recall_quiet)} "
            f"| {_ms(s.recall_flushing)} ({s.recall_flushing.n}) | {sum(s.commits.values())} "
            f"| {_ms(s.feedback)} |"
        )
    return [*lines, ""]


def fragment_markdown(run: FragmentResult) -> list[str]:
    lines = [
        f"## Fragments: {run.label}",
        "",
        f"{run.recalls:,} recalls, each followed by feedback(±1), then close(); settings "
        f"{run.settings or 'default'}; {run.elapsed_s:.0f} s. Recall {_ms(run.recall)} ms, "
        f"feedback {_ms(run.feedback)} ms (p50 / p95); {sum(run.commits.values()):,} commits "
        f"({_ms(run.commit)} ms each): "
        + ", ".join(f"{k} {v:,}" for k, v in run.commits.items())
        + ".",
        "",
        "Median ms per commit, first -> last quarter of the run: "
        + ", ".join(f"{k} {a:.0f} -> {b:.0f}" for k, (a, b) in run.commit_early_late_ms.items())
        + ".",
        "",
        "| table | fragments before | after | max seen | versions before | after "
        "| rows after | expected rows |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in TABLES:
        b, a = run.before[t], run.after[t]
        expected = run.expected_rows.get(t)
        lines.append(
            f"| {t} | {b.fragments} | {a.fragments} | {run.max_fragments_seen[t]} "
            f"| {b.versions} | {a.versions} | {a.rows:,} "
            f"| {'' if expected is None else f'{expected:,} ✓'} |"
        )
    if run.extrapolated_10k:
        lines += [
            "",
            "Extrapolated linearly to 10,000 recalls (not measured): "
            + ", ".join(
                f"{t} {s.fragments:,} fragments / {s.versions:,} versions"
                for t, s in run.extrapolated_10k.items()
                if t in run.expected_rows
            )
            + ".",
        ]
    return [*lines, ""]


def markdown(
    meta: dict[str, Any],
    limits: list[LimitResult],
    embedding: EmbeddingResult | None,
    sizes: list[SizeResult],
    runs: list[FragmentResult],
    ann: AnnResult | None = None,
) -> str:
    lines = [
        "# Recall benchmark",
        "",
        f"{meta['started']}; lancedb {meta['lancedb']}, {meta['cpus']} CPUs (load average "
        f"{meta['load_before']} before, {meta['load_after']} after); {meta['queries']} "
        "held-out queries per path, all paths of a section interleaved in one shuffled order.",
        "",
        *(limit_markdown(limits) if limits else []),
        *(embedding_markdown(embedding) if embedding else []),
        *(latency_markdown(sizes) if sizes else []),
        *(ann_markdown(ann) if ann else []),
    ]
    for run in runs:
        lines += fragment_markdown(run)
    return "\n".join(lines)
