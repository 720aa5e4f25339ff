"""Recall latency against raw LanceDB search, and fragment growth under sustained recalls.

How to run (from the repository root)::

    .venv/bin/python benchmarks/recall_bench.py --quick        # smoke run, a few minutes
    .venv/bin/python benchmarks/recall_bench.py                # 10k and 100k rows, 10,000 recalls
    .venv/bin/python benchmarks/recall_bench.py --sizes 10000 --queries 500 --fragment-recalls 2000
    .venv/bin/python benchmarks/recall_bench.py --profile 200  # also cProfile 200 recalls

The full run took about 55 minutes on 2 busy cores: 25 of them for the 10,000 recalls
with feedback, 13 for the 500-recall commit-per-recall baseline.

What it does:

1. **Corpus.** A few thousand distinct task sentences are generated from templates and
   embedded once with the Pack's default embedder. A Pack of N rows is made of those
   vectors plus small random perturbations (re-normalised), written straight to the
   ``memories`` table in big Arrow batches and compacted. Half the rows are memories
   with learned utility, confidence and reward counts, so Phase B has real work.
2. **Latency.** Held-out queries (never stored) go through five paths, interleaved in
   one shuffled order in one process: ``embed`` (the model alone), ``raw`` (embed +
   LanceDB cosine top-k1 on the same table, every column), ``raw_select`` (the same,
   reading only Phase A's columns), ``search`` (Phase A + B, nothing logged) and
   ``recall`` (``search`` plus episode logging and the flushes it triggers). Medians,
   p95 and ``recall / raw`` are reported per Pack size, with recalls that ran a flush
   counted apart. Because the other paths run between two recalls, most flushes here
   are set off by ``log_flush_seconds`` rather than ``log_flush_rows``. Feedback on
   100 of the episodes is timed after the loop.
3. **Fragments.** On a fresh copy of the smallest Pack, ``--fragment-recalls`` recalls
   each followed by ``feedback(±1)``, then ``close()``. Fragment counts, versions and
   row counts of every table are reported; the stored rows (episodes, retrieval log,
   reward events, usage and reward counts) are checked against what was logged. A
   baseline that commits on every recall (``log_flush_rows=1``, no compaction) runs a
   shorter series on another copy and is extrapolated linearly (and labelled so).

Results are printed as Markdown and written to ``out/bench/recall.json`` and
``out/bench/recall.md`` (``--profile``: ``out/bench/recall_profile.txt``). Timings on a
shared machine are noisy: compare the ratios, which come from paths measured side by side.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

from packs import KnowledgeChunk, Pack, schemas
from packs.embeddings import EmbeddingProvider, default_embedder
from packs.rows import knowledge_row, memory_id

OUT_DIR = Path("out/bench")
BUILD_BATCH = 25_000  # rows per append commit while building a Pack
TABLES = (
    schemas.MEMORIES, schemas.EPISODES, schemas.RETRIEVAL_LOG, schemas.REWARD_EVENTS,
    schemas.STATE_TRACES, schemas.PACK_META,
)  # fmt: skip
PATHS = ("embed", "raw", "raw_select", "search", "recall", "search_global", "recall_global")
# The columns Phase A reads (packs.retrieval), so raw_select is a like-for-like raw search.
PHASE_A_COLUMNS = [
    "id", "kind", "intent_text", "response_summary", "experience_summary", "utility",
    "confidence", "usage_count", "reward_count", "signal_polarity", "source", "title",
    "start_s", "end_s",
]  # fmt: skip


class BenchmarkError(RuntimeError):
    """A benchmark invariant failed: the Pack stored other rows than were logged."""


# --- corpus ------------------------------------------------------------------------------

_SUBJECTS = [
    "the nightly ETL job", "the billing service", "our Kubernetes cluster", "the React frontend",
    "the Postgres replica", "the payment webhook", "the search index", "the CI pipeline",
    "the mobile app", "the data warehouse", "the auth gateway", "the recommendation model",
    "the invoice exporter", "the Kafka consumer", "the S3 backup", "the feature-flag service",
    "the customer support bot", "the pricing spreadsheet", "the onboarding email flow",
    "the GPU training run", "the Terraform stack", "the Redis cache", "the audit log",
]  # fmt: skip
_VERBS = [
    "speed up", "debug", "migrate", "roll back", "monitor", "document", "secure", "refactor",
    "load-test", "deploy", "rate-limit", "back up", "profile", "shard", "retry", "validate",
]  # fmt: skip
_CONDITIONS = [
    "it times out under load", "memory keeps growing", "a deploy is half done",
    "the schema changed upstream", "credentials expired overnight", "traffic doubles on Monday",
    "the disk is almost full", "two writers race", "the region fails over",
    "logs show duplicate events", "latency spikes every hour", "a customer reports wrong totals",
]  # fmt: skip
_GOALS = [
    "without downtime", "before the quarterly audit", "for the EU customers",
    "with less than 1% error", "on a shoestring budget", "so on-call can sleep",
    "ahead of the product launch", "while keeping costs flat", "for the new hires",
]  # fmt: skip
_TOOLS = [
    "Prometheus", "pytest", "Grafana", "Airflow", "dbt", "Sentry", "GitHub Actions", "Helm",
    "pandas", "OpenTelemetry", "a bash script", "feature flags", "pg_stat_statements",
]  # fmt: skip
_TEMPLATES = [
    "How do I {verb} {subject} when {condition}?",
    "Steps to {verb} {subject} {goal}",
    "Why does {subject} break when {condition}, and how do I {verb} it?",
    "Use {tool} to {verb} {subject} {goal}",
    "Checklist: {verb} {subject} after {condition2}",
    "What is the safest way to {verb} {subject} with {tool} when {condition}?",
    "Plan to {verb} {subject} {goal} using {tool}",
    "Lessons from the time {subject} failed because {condition}",
]


def generate_sentences(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct task-like sentences from the templates, in a seeded order."""
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        text = rng.choice(_TEMPLATES).format(
            verb=rng.choice(_VERBS), subject=rng.choice(_SUBJECTS),
            condition=rng.choice(_CONDITIONS), condition2=rng.choice(_CONDITIONS),
            goal=rng.choice(_GOALS), tool=rng.choice(_TOOLS),
        )  # fmt: skip
        text = text[0].upper() + text[1:]
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def perturbed(base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Base vectors plus Gaussian noise of norm 0.1..0.35 (cosine to base ~0.99..0.94)."""
    noise = rng.standard_normal(base.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    noise *= rng.uniform(0.1, 0.35, size=(base.shape[0], 1)).astype(np.float32)
    out: np.ndarray = base + noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def corpus_row(
    i: int, text: str, vec: np.ndarray, now: datetime, rng: np.random.Generator
) -> dict[str, Any]:
    """Row ``i``: a knowledge chunk, or (odd ``i``) a memory with learned state."""
    chunk = KnowledgeChunk(f"{text} (note {i})", f"bench://doc-{i // 40}", i, f"Doc {i // 40}")
    row = knowledge_row(chunk, vec, now)
    if i % 2:
        rewards = int(rng.integers(1, 12))
        response = f"Resolved by runbook step {i % 97}; verified in staging."
        row.update(
            id=memory_id(row["intent_text"], response),
            kind=schemas.KIND_MEMORY,
            response_summary=response,
            experience_summary=f"Check the runbook before acting ({i % 13} prior incidents).",
            outcome="success" if rng.random() < 0.7 else "failure",
            signal_polarity=[None, "success", "failure"][int(rng.integers(0, 3))],
            utility=float(rng.uniform(-0.9, 0.9)),
            confidence=float(rng.uniform(0.0, 1.0)),
            # No reward log stands behind these synthetic utilities, and a rewarded
            # memory's stored state is the replay of its log (packs/journal.py), so the
            # count starts at 0: the fragment run's reward_count check then holds exactly.
            reward_count=0,
            usage_count=rewards + int(rng.integers(0, 20)),
        )
    return row


def build_pack(
    root: Path, name: str, size: int, texts: Sequence[str], vectors: np.ndarray, seed: int
) -> float:
    """Write a Pack of ``size`` rows straight to ``memories``; returns seconds taken."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    with Pack.open(name, root) as pack:
        schema = schemas.memories_schema(pack.embedding.dim)
        now = datetime.now(UTC)
        for lo in range(0, size, BUILD_BATCH):
            idx = np.arange(lo, min(size, lo + BUILD_BATCH))
            base = idx % len(texts)
            vecs = perturbed(vectors[base], rng)
            rows = [
                corpus_row(int(i), texts[int(b)], vecs[j], now, rng)
                for j, (i, b) in enumerate(zip(idx, base, strict=True))
            ]
            pack.store.append(schemas.MEMORIES, pa.Table.from_pylist(rows, schema=schema))
        pack.store.compact(schemas.MEMORIES)
    return time.perf_counter() - start


# --- latency -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencyStats:
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> LatencyStats:
        ms = np.asarray(seconds, dtype=np.float64) * 1e3
        if ms.size == 0:
            return cls(0, float("nan"), float("nan"), float("nan"))
        p50, p95 = np.percentile(ms, [50, 95])
        return cls(int(ms.size), float(p50), float(p95), float(ms.mean()))


class WriteTracker:
    """Counts and times every commit the Pack makes through its store.

    Flushes run inside ``recall`` and ``feedback`` when the buffer is due; every write
    goes through ``PackStore.append``/``merge``/``compact``, so wrapping those three
    sees every flush and compaction whatever calls them.
    """

    def __init__(self, pack: Pack) -> None:
        self.commits: dict[str, int] = {}
        self.seconds: list[float] = []
        self.by_key: dict[str, list[float]] = {}
        store = pack.store
        for method in ("append", "merge", "compact"):
            setattr(store, method, self._wrap(getattr(store, method), method))

    def _wrap(self, inner: Callable[..., None], method: str) -> Callable[..., None]:
        def timed(name: str, *args: Any, **kwargs: Any) -> None:
            start = time.perf_counter()
            inner(name, *args, **kwargs)
            elapsed = time.perf_counter() - start
            key = f"{name}.{method}"
            self.seconds.append(elapsed)
            self.by_key.setdefault(key, []).append(elapsed)
            self.commits[key] = self.commits.get(key, 0) + 1

        return timed

    def early_late_ms(self) -> dict[str, tuple[float, float]]:
        """Median ms of each kind of commit in the first and the last quarter of the run."""
        out = {}
        for key, seconds in sorted(self.by_key.items()):
            quarter = max(1, len(seconds) // 4)
            early, late = seconds[:quarter], seconds[-quarter:]
            out[key] = (float(np.median(early)) * 1e3, float(np.median(late)) * 1e3)
        return out

    @property
    def count(self) -> int:
        return len(self.seconds)


@dataclass
class SizeResult:
    rows: int
    build_s: float
    paths: dict[str, LatencyStats]
    recall_quiet: LatencyStats  # recalls that committed nothing
    recall_flushing: LatencyStats  # recalls that ran a flush (and maybe a compaction)
    commits: dict[str, int]  # "<table>.<append|merge|compact>" during the measured loop
    feedback: LatencyStats  # measured after the loop, on episodes of the loop
    ratio_p50: float  # recall p50 / raw p50: the goal is <= 1.5
    ratio_p95: float
    ratio_select_p50: float  # recall p50 / raw_select p50
    search_ratio_p50: float  # search p50 / raw p50 (ranking without logging)
    context_memories: int = 0  # memories with a reward history in the contextual index
    ratio_global_p50: float = float("nan")  # recall_global p50 / raw p50


def train_context(pack: Pack, texts: Sequence[str], recalls: int, seed: int) -> int:
    """``recalls`` recalls of stored texts, each rewarded ±1, so the contextual index has
    histories to weigh; returns how many memories have one."""
    rng = random.Random(seed)
    for _ in range(recalls):
        recall = pack.recall(rng.choice(texts))
        pack.feedback(recall.episode_id or "", rng.choice((1.0, -1.0)))
    pack.flush()
    pack._journal.load_context()
    return len(pack._journal.context)


def latency_paths(
    pack: Pack, plain: Pack, embedder: EmbeddingProvider
) -> dict[str, Callable[[str], object]]:
    """``pack`` ranks with the Pack default (contextual utility), ``plain`` is a second
    handle on the same tables with ``utility_mode="global"`` (plain MemRL)."""
    table = pack.store.table(schemas.MEMORIES)
    k1 = pack.settings.k1

    def raw(query: str) -> object:
        vec = embedder.embed([query])[0]
        return (
            table.search(vec, vector_column_name="intent_embedding")
            .distance_type("cosine")
            .limit(k1)
            .to_arrow()
        )

    def raw_select(query: str) -> object:
        # Same as raw but reads only Phase A's columns, not the two vector columns.
        vec = embedder.embed([query])[0]
        return (
            table.search(vec, vector_column_name="intent_embedding")
            .distance_type("cosine")
            .select([*PHASE_A_COLUMNS, "_distance"])
            .limit(k1)
            .to_arrow()
        )

    return {
        "embed": lambda q: embedder.embed([q]),
        "raw": raw,
        "raw_select": raw_select,
        "search": pack.search,
        "recall": pack.recall,
        "search_global": plain.search,
        "recall_global": plain.recall,
    }


@dataclass
class LatencyRun:
    times: dict[str, list[float]]
    quiet: list[float]
    flushing: list[float]
    commits: dict[str, int]
    episodes: list[str]


def measure_latency(
    pack: Pack, plain: Pack, queries: Sequence[str], warmup: Sequence[str], seed: int
) -> LatencyRun:
    """Per-query seconds of every path, run interleaved in one shuffled order."""
    paths = latency_paths(pack, plain, default_embedder())
    for query in warmup:
        for fn in paths.values():
            fn(query)
    pack.flush()
    tracker = WriteTracker(pack)
    tasks = [(name, q) for q in queries for name in PATHS]
    random.Random(seed).shuffle(tasks)
    run = LatencyRun({name: [] for name in PATHS}, [], [], tracker.commits, [])
    for name, query in tasks:
        commits = tracker.count
        start = time.perf_counter()
        result = paths[name](query)
        elapsed = time.perf_counter() - start
        run.times[name].append(elapsed)
        if name == "recall":
            (run.quiet if tracker.count == commits else run.flushing).append(elapsed)
            run.episodes.append(getattr(result, "episode_id", ""))
    run.commits = dict(tracker.commits)
    return run


def time_feedback(pack: Pack, episodes: Sequence[str], seed: int) -> list[float]:
    rng = random.Random(seed)
    seconds = []
    for episode_id in episodes:
        start = time.perf_counter()
        pack.feedback(episode_id, rng.choice((-1.0, 1.0)))
        seconds.append(time.perf_counter() - start)
    return seconds


def run_size(root: Path, size: int, corpus: Corpus, args: argparse.Namespace) -> SizeResult:
    name = f"bench{size}"
    build_s = build_pack(root, name, size, corpus.texts, corpus.vectors, args.seed + size)
    if size == min(args.sizes):
        for copy in ("frag", "base"):
            shutil.copytree(root / name, root / f"{name}{copy}")
    with Pack.open(name, root) as pack:
        history = train_context(pack, corpus.texts, args.train_recalls, args.seed)
        plain_settings = {**pack.settings.to_dict(), "utility_mode": "global"}
        with Pack.open(name, root, settings=plain_settings) as plain:
            run = measure_latency(pack, plain, corpus.queries, corpus.warmup, args.seed)
        feedback = time_feedback(pack, run.episodes[:100], args.seed)
        if args.profile and size == max(args.sizes):
            write_profile(pack, corpus.queries, args.profile)
    stats = {name: LatencyStats.of(run.times[name]) for name in PATHS}
    recall, raw = stats["recall"], stats["raw"]
    return SizeResult(
        context_memories=history,
        ratio_global_p50=stats["recall_global"].p50_ms / raw.p50_ms,
        rows=size,
        build_s=build_s,
        paths=stats,
        recall_quiet=LatencyStats.of(run.quiet),
        recall_flushing=LatencyStats.of(run.flushing),
        commits=run.commits,
        feedback=LatencyStats.of(feedback),
        ratio_p50=recall.p50_ms / raw.p50_ms,
        ratio_p95=recall.p95_ms / raw.p95_ms,
        ratio_select_p50=recall.p50_ms / stats["raw_select"].p50_ms,
        search_ratio_p50=stats["search"].p50_ms / raw.p50_ms,
    )


def write_profile(pack: Pack, queries: Sequence[str], count: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(count):
        pack.recall(queries[i % len(queries)])
    profiler.disable()
    text = io.StringIO()
    for key in ("cumulative", "tottime"):
        text.write(f"=== {count} recalls on {pack.name}, sorted by {key} ===\n")
        pstats.Stats(profiler, stream=text).sort_stats(key).print_stats(35)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "recall_profile.txt").write_text(text.getvalue())


# --- fragments ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TableState:
    fragments: int
    versions: int
    rows: int


@dataclass
class FragmentResult:
    label: str
    recalls: int
    settings: dict[str, int]
    elapsed_s: float
    before: dict[str, TableState]
    after: dict[str, TableState]
    max_fragments_seen: dict[str, int]
    expected_rows: dict[str, int]
    recall: LatencyStats
    feedback: LatencyStats
    commit: LatencyStats  # one store write (append, merge or compact)
    commits: dict[str, int]  # "<table>.<append|merge|compact>"
    commit_early_late_ms: dict[str, tuple[float, float]]  # p50, first and last quarter
    extrapolated_10k: dict[str, TableState] = field(default_factory=dict)


def table_states(pack: Pack) -> dict[str, TableState]:
    store = pack.store
    return {
        name: TableState(
            fragments=store.fragment_count(name),
            versions=len(store.table(name).list_versions()),
            rows=int(store.table(name).count_rows()),
        )
        for name in TABLES
    }


def learned_totals(pack: Pack) -> tuple[int, int]:
    """Sums of ``usage_count`` and ``reward_count`` over every stored row."""
    table = pack.store.table(schemas.MEMORIES)
    data = (
        table.search().select(["usage_count", "reward_count"]).limit(table.count_rows()).to_arrow()
    )
    return int(data["usage_count"].to_numpy().sum()), int(data["reward_count"].to_numpy().sum())


def check(condition: bool, message: str) -> None:
    if not condition:
        raise BenchmarkError(message)


def fragment_run(
    root: Path,
    name: str,
    label: str,
    recalls: int,
    queries: Sequence[str],
    settings: dict[str, int],
    seed: int,
) -> FragmentResult:
    """``recalls`` x (recall + feedback ±1), then close; stored rows checked exactly."""
    rng = random.Random(seed)
    pack = Pack.open(name, root, settings=settings or None)
    before = table_states(pack)
    uses_before, rewards_before = learned_totals(pack)
    tracker = WriteTracker(pack)
    max_seen = {t: s.fragments for t, s in before.items()}
    sample_every = max(1, recalls // 50)
    candidates = injected = applied = 0
    recall_s: list[float] = []
    feedback_s: list[float] = []
    start = time.perf_counter()
    for i in range(recalls):
        t0 = time.perf_counter()
        result = pack.recall(queries[i % len(queries)])
        t1 = time.perf_counter()
        reward = pack.feedback(result.episode_id or "", rng.choice((-1.0, 1.0)))
        feedback_s.append(time.perf_counter() - t1)
        recall_s.append(t1 - t0)
        candidates += result.candidate_count
        injected += len(result.items)
        applied += reward.applied
        if (i + 1) % sample_every == 0:
            for t in TABLES:
                max_seen[t] = max(max_seen[t], pack.store.fragment_count(t))
        if (i + 1) % 1000 == 0:
            print(f"  {label}: {i + 1:,} recalls, {time.perf_counter() - start:.0f} s", flush=True)
    pack.close()
    elapsed = time.perf_counter() - start
    after = table_states(pack)
    for t in TABLES:
        max_seen[t] = max(max_seen[t], after[t].fragments)
    expected = {
        schemas.MEMORIES: before[schemas.MEMORIES].rows,
        schemas.EPISODES: before[schemas.EPISODES].rows + recalls,
        schemas.RETRIEVAL_LOG: before[schemas.RETRIEVAL_LOG].rows + candidates,
        schemas.REWARD_EVENTS: before[schemas.REWARD_EVENTS].rows + applied,
    }
    for t, rows in expected.items():
        check(after[t].rows == rows, f"{label}: {t} holds {after[t].rows} rows, expected {rows}.")
    uses_after, rewards_after = learned_totals(pack)
    check(
        uses_after - uses_before == injected,
        f"{label}: usage_count grew by {uses_after - uses_before}, expected {injected}.",
    )
    check(
        rewards_after - rewards_before == applied,
        f"{label}: reward_count grew by {rewards_after - rewards_before}, expected {applied}.",
    )
    return FragmentResult(
        label=label,
        recalls=recalls,
        settings=settings,
        elapsed_s=elapsed,
        before=before,
        after=after,
        max_fragments_seen=max_seen,
        expected_rows=expected,
        recall=LatencyStats.of(recall_s),
        feedback=LatencyStats.of(feedback_s),
        commit=LatencyStats.of(tracker.seconds),
        commits=dict(sorted(tracker.commits.items())),
        commit_early_late_ms=tracker.early_late_ms(),
    )


def extrapolate(result: FragmentResult, target: int) -> dict[str, TableState]:
    """Linear growth per recall of fragments, versions and rows, scaled to ``target``."""
    scale = target / result.recalls
    out = {}
    for t in TABLES:
        b, a = result.before[t], result.after[t]
        out[t] = TableState(
            fragments=round(b.fragments + (a.fragments - b.fragments) * scale),
            versions=round(b.versions + (a.versions - b.versions) * scale),
            rows=round(b.rows + (a.rows - b.rows) * scale),
        )
    return out


# --- report ------------------------------------------------------------------------------


def _ms(stats: LatencyStats) -> str:
    return f"{stats.p50_ms:.1f} / {stats.p95_ms:.1f}"


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
        "Goal: recall p50, logging included, at most 1.5x raw p50. `raw` is the embedding "
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


def markdown(sizes: list[SizeResult], runs: list[FragmentResult], meta: dict[str, Any]) -> str:
    lines = [
        "# Recall benchmark",
        "",
        f"{meta['started']}; lancedb {meta['lancedb']}, {meta['cpus']} CPUs (load average "
        f"{meta['load_before']} before, {meta['load_after']} after); {meta['queries']} "
        "held-out queries per path, all paths interleaved in one shuffled order.",
        "",
        *latency_markdown(sizes),
    ]
    for run in runs:
        lines += fragment_markdown(run)
    return "\n".join(lines)


# --- main --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    texts: list[str]  # embedded once; the rows are perturbations of these
    vectors: np.ndarray
    queries: list[str]  # held out: never stored
    warmup: list[str]


def make_corpus(args: argparse.Namespace) -> Corpus:
    sentences = generate_sentences(
        args.base_texts + args.queries + args.warmup, random.Random(args.seed)
    )
    texts = sentences[: args.base_texts]
    return Corpus(
        texts=texts,
        vectors=default_embedder().embed(texts),
        queries=sentences[args.base_texts : args.base_texts + args.queries],
        warmup=sentences[args.base_texts + args.queries :],
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=400, help="held-out queries per path")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--train-recalls", type=int, default=500, help="rewarded recalls before timing"
    )
    parser.add_argument("--base-texts", type=int, default=3_000, help="distinct sentences embedded")
    parser.add_argument("--fragment-recalls", type=int, default=10_000)
    parser.add_argument("--baseline-recalls", type=int, default=500)
    parser.add_argument("--profile", type=int, default=0, help="cProfile this many recalls")
    parser.add_argument("--root", type=Path, default=None, help="keep the Packs here")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries, args.base_texts = [2_000, 5_000], 60, 400
        args.fragment_recalls, args.baseline_recalls = 300, 60
    return args


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
    corpus = make_corpus(args)
    meta["embed_corpus_s"] = round(time.perf_counter() - start, 1)
    print(f"embedded {len(corpus.texts)} sentences in {meta['embed_corpus_s']} s", flush=True)
    root = args.root or Path(tempfile.mkdtemp(prefix="wolfie-recall-bench-"))
    small = min(args.sizes)
    try:
        sizes = []
        for size in sorted(args.sizes):
            sizes.append(run_size(root, size, corpus, args))
            print(f"{size:,} rows: recall/raw p50 {sizes[-1].ratio_p50:.2f}x", flush=True)
        runs = [
            fragment_run(
                root, f"bench{small}frag", f"{small:,}-row Pack, default settings",
                args.fragment_recalls, corpus.queries, {}, args.seed,
            ),
            fragment_run(
                root, f"bench{small}base", f"{small:,}-row Pack, commit per recall (baseline)",
                args.baseline_recalls, corpus.queries,
                {"log_flush_rows": 1, "compact_every_commits": 10**9}, args.seed,
            ),
        ]  # fmt: skip
        runs[1].extrapolated_10k = extrapolate(runs[1], 10_000)
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    report = markdown(sizes, runs, meta)
    print(report)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "recall.md").write_text(report)
    payload = {
        "meta": meta,
        "sizes": [asdict(s) for s in sizes],
        "fragments": [asdict(r) for r in runs],
    }
    (OUT_DIR / "recall.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
