"""Recall latency against raw LanceDB search, in both utility modes (the PR-era section).

Held-out queries go through seven paths interleaved in one shuffled order: ``embed``,
``raw`` (embed + LanceDB cosine top-k1, every column), ``raw_select`` (Phase A's columns),
``search``, ``recall`` and their ``utility_mode="global"`` twins on a second handle.
Recalls that ran a flush are counted apart; feedback on 100 episodes is timed after.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
from bench_storage import storage_of

from packs import Pack
from packs.embeddings import EmbeddingProvider, default_embedder
from packs.recall.phases import CANDIDATE_COLUMNS
from packs.store import schemas

from .corpus import build_pack, generate_sentences
from .stats import LatencyStats

OUT_DIR = Path("out/bench")
PATHS = ("embed", "raw", "raw_select", "search", "recall", "search_global", "recall_global")
PHASE_A_COLUMNS = CANDIDATE_COLUMNS


class WriteTracker:
    """Counts and times every commit the Pack makes through its store.

    Flushes run inside ``recall`` and ``feedback`` when the buffer is due; every write
    goes through ``PackStore.append``/``merge``/``optimize``, so wrapping those three
    sees every flush and compaction whatever calls them.
    """

    def __init__(self, pack: Pack) -> None:
        self.commits: dict[str, int] = {}
        self.seconds: list[float] = []
        self.by_key: dict[str, list[float]] = {}
        store = storage_of(pack)
        for method in ("append", "merge", "optimize"):
            setattr(store, method, self._wrap(getattr(store, method), method))

    def _wrap(self, inner: Callable[..., Any], method: str) -> Callable[..., Any]:
        def timed(name: str, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            done = inner(name, *args, **kwargs)  # optimize returns what it removed
            elapsed = time.perf_counter() - start
            key = f"{name}.{method}"
            self.seconds.append(elapsed)
            self.by_key.setdefault(key, []).append(elapsed)
            self.commits[key] = self.commits.get(key, 0) + 1
            return done

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


@dataclass
class SizeResult:
    rows: int
    build_s: float
    paths: dict[str, LatencyStats]
    recall_quiet: LatencyStats  # recalls that committed nothing
    recall_flushing: LatencyStats  # recalls that ran a flush (and maybe a compaction)
    commits: dict[str, int]  # "<table>.<append|merge|optimize>" during the measured loop
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
    pack._svc.learning.sync()
    return len(pack._svc.learning.context)


def latency_paths(
    pack: Pack, plain: Pack, embedder: EmbeddingProvider
) -> dict[str, Callable[[str], object]]:
    """``pack`` ranks with the Pack default (contextual utility), ``plain`` is a second
    handle on the same tables with ``utility_mode="global"`` (plain MemRL)."""
    table = lancedb.connect(storage_of(pack).location.uri).open_table(schemas.MEMORIES)  # raw path
    k1 = pack.settings.ranking.k1

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
