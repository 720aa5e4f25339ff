"""Fragment growth under sustained recalls with feedback, against committing per recall.

On a fresh copy of the smallest Pack: ``recalls`` x (recall + feedback ±1), then close.
Fragment counts, versions and rows of every table are reported, and the stored rows
(episodes, retrieval log, reward events, usage and reward counts) are checked exactly.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_storage import storage_of

from packs import Pack
from packs.store import schemas

from .latency import WriteTracker
from .stats import LatencyStats

TABLES = (
    schemas.MEMORIES,
    schemas.EPISODES,
    schemas.RETRIEVAL_LOG,
    schemas.REWARD_EVENTS,
    schemas.STATE_TRACES,
    schemas.PACK_META,
)


class BenchmarkError(RuntimeError):
    """A benchmark invariant failed: the Pack stored other rows than were logged."""


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
    commit: LatencyStats  # one store write (append, merge or optimize)
    commits: dict[str, int]  # "<table>.<append|merge|optimize>"
    commit_early_late_ms: dict[str, tuple[float, float]]  # p50, first and last quarter
    extrapolated_10k: dict[str, TableState] = field(default_factory=dict)


def table_states(pack: Pack) -> dict[str, TableState]:
    store = storage_of(pack)  # fragments and versions of every table, pack_meta's too
    return {
        name: TableState(
            fragments=store.fragment_count(name),
            versions=len(store.versions(name)),
            rows=store.count(name),
        )
        for name in TABLES
    }


def learned_totals(pack: Pack) -> tuple[int, int]:
    """Sums of ``usage_count`` and ``reward_count`` over every stored row."""
    data = pack.query("items", columns=["usage_count", "reward_count"])
    return int(data["usage_count"].sum()), int(data["reward_count"].sum())


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
                max_seen[t] = max(max_seen[t], storage_of(pack).fragment_count(t))
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
