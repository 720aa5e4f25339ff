"""Recall against the machine's limit, query embedding, ingestion, latency and fragments.

How to run (from the repository root)::

    .venv/bin/python benchmarks/recall_bench.py                        # limit + embedding
    .venv/bin/python benchmarks/recall_bench.py --limit-sizes 10000 100000 --queries 200
    .venv/bin/python benchmarks/recall_bench.py --sections latency fragments   # older sections
    .venv/bin/python benchmarks/recall_bench.py --quick                # smoke run, minutes

Sections (``--sections``; each lives in ``benchmarks/recallbench/``):

- ``limit`` (issue 16): a Pack of ``--limit-sizes`` knowledge chunks built through
  ``add_knowledge`` with a fast deterministic embedder; ``Pack.recall`` and ``search``
  timed against an exact numpy scan of the same vectors (the limit row) and LanceDB's flat
  search, interleaved; Phase A's candidates and the top-3 checked against exact search.
- ``embedding``: one query through the real model against a repeated query through the
  Pack's query cache; ``add_knowledge`` throughput against the bare embedder.
- ``latency``: recall against raw LanceDB search in both utility modes, on Packs of
  ``--sizes`` rows (perturbed copies of really embedded sentences, half memories).
- ``ann``: ``--ann-rows`` rows (1M) indexed by maintenance (IVF_SQ), where the cache
  stands aside: LanceDB's indexed search for a few ``nprobes`` and refine factors,
  ``Pack.search`` and ``Pack.recall``, against the exact scan, with recall@k1, RSS per
  million rows, and ``--ann-tail`` rows added after the index searched with their own text.
- ``fragments``: fragment growth under ``--fragment-recalls`` recalls with feedback,
  against a commit-per-recall baseline (``--baseline-recalls``), rows checked exactly.
- ``e2e`` (issue 24): ``Pack.recall`` with the shipped embedder against the bare model on
  one thread plus an exact numpy scan, at ``--e2e-sizes``, with p99 and the slow 5 %
  tagged by cause (a commit, a cache catch-up, a GC).
- ``writes`` (issue 24): 200 chunks into a maintained Pack of ``--write-rows`` rows against
  a fresh Pack, with the word-hash and the shipped embedder.
- ``scopes`` (issue 24): ``--scopes`` x ``--per-scope`` rows, scoped search and recall
  against an exact scan of the scope, recall@k1, beside unscoped recall on as many rows.

Issue 24's sections, as quoted in docs/recall.md::

    PYTHONPATH=. .venv/bin/python benchmarks/recall_bench.py --sections e2e writes scopes \
        --root /tmp/wolfie-bench   # builds 300k and 2 x 1M-row Packs once (about 40 min)

Results are printed as Markdown and written to ``out/bench/recall.json`` and
``out/bench/recall.md``. Timings on a shared machine are noisy: compare the ratios, which
come from paths measured side by side in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lancedb

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, find the parts

from recallbench.ann import AnnResult, run_ann
from recallbench.corpus import generate_sentences
from recallbench.e2e import run_e2e
from recallbench.embedding import EmbeddingResult, run_embedding
from recallbench.fragments import FragmentResult, extrapolate, fragment_run
from recallbench.latency import OUT_DIR, SizeResult, make_corpus, run_size
from recallbench.limit import LimitResult, run_limit
from recallbench.report import markdown
from recallbench.report24 import e2e_markdown, scopes_markdown, writes_markdown
from recallbench.writes import run_scopes, run_writes, scope_queries

SECTIONS = ("limit", "embedding", "latency", "fragments", "ann", "e2e", "writes", "scopes")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=["limit", "embedding"])
    parser.add_argument("--limit-sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200, help="held-out queries per path")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--train-recalls", type=int, default=500, help="rewarded recalls before timing"
    )
    parser.add_argument("--base-texts", type=int, default=3_000, help="distinct sentences embedded")
    parser.add_argument("--fragment-recalls", type=int, default=10_000)
    parser.add_argument("--baseline-recalls", type=int, default=500)
    parser.add_argument("--ann-rows", type=int, default=1_000_000)
    parser.add_argument("--ann-tail", type=int, default=200, help="rows added after the index")
    parser.add_argument("--ingest-chunks", type=int, default=256)
    parser.add_argument("--ingest-repeats", type=int, default=3)
    parser.add_argument("--e2e-sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--write-rows", type=int, nargs="+", default=[300_000])
    parser.add_argument("--write-repeats", type=int, default=3)
    parser.add_argument("--scopes", type=int, default=1_000)
    parser.add_argument("--per-scope", type=int, default=1_000)
    parser.add_argument("--active-scopes", type=int, default=20, help="scopes recalled in turn")
    parser.add_argument("--profile", type=int, default=0, help="cProfile this many recalls")
    parser.add_argument("--root", type=Path, default=None, help="keep the Packs here")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.limit_sizes, args.sizes, args.queries, args.base_texts = [5_000], [2_000], 60, 400
        args.fragment_recalls, args.baseline_recalls, args.ingest_chunks = 300, 60, 64
        args.ingest_repeats, args.e2e_sizes, args.write_rows = 2, [2_000], [20_000]
        args.scopes, args.per_scope, args.write_repeats = 20, 500, 2
    return args


def held_out(count: int, seed: int) -> list[str]:
    """Queries built like the stored sentences but from another seed (never stored as
    such; a rare exact match would only make a query easier)."""
    return generate_sentences(count, random.Random(seed + 1_000_003))


def run_sections(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    limits: list[LimitResult] = []
    embedding: EmbeddingResult | None = None
    sizes: list[SizeResult] = []
    runs: list[FragmentResult] = []
    ann: AnnResult | None = None
    if "limit" in args.sections:
        queries = held_out(args.queries + args.warmup, args.seed)
        timed, warmup = queries[: args.queries], queries[args.queries :]
        for size in sorted(args.limit_sizes):
            limits.append(run_limit(root, size, timed, warmup, args.seed))
            last = limits[-1]
            print(
                f"{size:,} rows: recall/scan p50 {last.recall_over_scan:.2f}x, recall/(scan+bm25) {last.recall_over_hybrid:.2f}x",
                flush=True,
            )
    if "embedding" in args.sections:
        queries = held_out(args.queries, args.seed + 1)
        embedding = run_embedding(queries, args.ingest_chunks, args.ingest_repeats, args.seed)
        print(f"ingestion add_knowledge/bare {embedding.ingest_ratio:.2f}x", flush=True)
    if "latency" in args.sections or "fragments" in args.sections:
        corpus = make_corpus(args)
        for size in sorted(args.sizes):
            sizes.append(run_size(root, size, corpus, args))
            print(f"{size:,} rows: recall/raw p50 {sizes[-1].ratio_p50:.2f}x", flush=True)
        if "fragments" in args.sections:
            runs = fragment_runs(root, args, corpus.queries)
    if "ann" in args.sections:
        queries = held_out(args.queries, args.seed + 2)
        ann = run_ann(root, args.ann_rows, queries, args.seed, args.ann_tail)
    extra: dict[str, Any] = {"e2e": [], "writes": [], "scopes": None}
    if "e2e" in args.sections:
        corpus = make_corpus(args)
        for size in sorted(args.e2e_sizes):
            extra["e2e"].append(
                run_e2e(
                    root,
                    size,
                    corpus.texts,
                    corpus.vectors,
                    corpus.queries,
                    corpus.warmup,
                    args.seed,
                )
            )
            print(
                f"{size:,} rows: recall/limit {extra['e2e'][-1].recall_over_limit:.2f}x", flush=True
            )
    if "writes" in args.sections:
        for rows in sorted(args.write_rows):
            extra["writes"].append(run_writes(root, rows, args.write_repeats, args.seed))
            print(f"{rows:,} rows: writes large/fresh {extra['writes'][-1].ratio}", flush=True)
    if "scopes" in args.sections:
        queries = scope_queries(args.queries, args.seed)
        extra["scopes"] = run_scopes(
            root, args.scopes, args.per_scope, queries, args.active_scopes, args.seed
        )
    return {
        "limits": limits,
        "embedding": embedding,
        "sizes": sizes,
        "runs": runs,
        "ann": ann,
        **extra,
    }


def fragment_runs(
    root: Path, args: argparse.Namespace, queries: Sequence[str]
) -> list[FragmentResult]:
    small = min(args.sizes)
    runs = [
        fragment_run(
            root,
            f"bench{small}frag",
            f"{small:,}-row Pack, default settings",
            args.fragment_recalls,
            queries,
            {},
            args.seed,
        ),
        fragment_run(
            root,
            f"bench{small}base",
            f"{small:,}-row Pack, commit per recall (baseline)",
            args.baseline_recalls,
            queries,
            {"log_flush_rows": 1, "compact_every_commits": 10**9},
            args.seed,
        ),
    ]
    runs[1].extrapolated_10k = extrapolate(runs[1], 10_000)
    return runs


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    meta: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancedb": lancedb.__version__,
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 2),
        "args": {k: str(v) for k, v in vars(args).items()},
        "queries": args.queries,
    }
    start = time.perf_counter()
    root = args.root or Path(tempfile.mkdtemp(prefix="wolfie-recall-bench-"))
    try:
        results = run_sections(args, root)
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    meta["elapsed_s"] = round(time.perf_counter() - start)
    report = markdown(
        meta, **{k: results[k] for k in ("limits", "embedding", "sizes", "runs", "ann")}
    )
    report += "\n" + "\n".join(
        [
            *e2e_markdown(results["e2e"]),
            *(writes_markdown(results["writes"]) if results["writes"] else []),
            *(scopes_markdown(results["scopes"]) if results["scopes"] else []),
        ]
    )
    print(report)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "recall.md").write_text(report)
    payload = {
        "meta": meta,
        "limit": [asdict(r) for r in results["limits"]],
        "embedding": asdict(results["embedding"]) if results["embedding"] else None,
        "sizes": [asdict(s) for s in results["sizes"]],
        "fragments": [asdict(r) for r in results["runs"]],
        "ann": asdict(results["ann"]) if results["ann"] else None,
        "e2e": [asdict(r) for r in results["e2e"]],
        "writes": [asdict(r) for r in results["writes"]],
        "scopes": asdict(results["scopes"]) if results["scopes"] else None,
    }
    (OUT_DIR / "recall.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
