"""Latency statistics and the interleaved timing loop every section shares."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LatencyStats:
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    p99_ms: float = float("nan")

    @classmethod
    def of(cls, seconds: Sequence[float]) -> LatencyStats:
        ms = np.asarray(seconds, dtype=np.float64) * 1e3
        if ms.size == 0:
            return cls(0, float("nan"), float("nan"), float("nan"))
        p50, p95, p99 = np.percentile(ms, [50, 95, 99])
        return cls(int(ms.size), float(p50), float(p95), float(ms.mean()), float(p99))

    def cell(self) -> str:
        return f"{self.p50_ms:.1f} / {self.p95_ms:.1f}"


def interleaved(
    paths: Mapping[str, Callable[[str], object]], queries: Sequence[str], seed: int
) -> dict[str, list[float]]:
    """Seconds per call of every path on every query, all in one shuffled order, so load
    from other jobs on the machine falls on every path alike."""
    tasks = [(name, q) for q in queries for name in paths]
    random.Random(seed).shuffle(tasks)
    times: dict[str, list[float]] = {name: [] for name in paths}
    for name, query in tasks:
        start = time.perf_counter()
        paths[name](query)
        times[name].append(time.perf_counter() - start)
    return times


def rss_mib() -> float:
    """Resident memory of this process now (Linux /proc), in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")
