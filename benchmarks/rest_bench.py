"""A warm REST recall over loopback against the same recall in process.

How to run (from the repository root; ``PYTHONPATH=.`` so the checkout's code is used)::

    PYTHONPATH=. .venv/bin/python benchmarks/rest_bench.py                 # 10k rows
    PYTHONPATH=. .venv/bin/python benchmarks/rest_bench.py --rows 2000 --calls 50

A Pack of ``--rows`` rows (perturbed copies of really embedded task sentences, half
memories: ``benchmarks/recallbench/corpus.py``) is built once under ``--root``. Then
``wolfie api`` is started on it (with a token, on a free loopback port) and, side by side
in one shuffled order so that load from other jobs falls on both alike:

- **REST**: ``POST /v1/packs/{pack}/recall`` (and ``/search``) through one keep-alive
  ``httpx.Client``: JSON out, the server's routing, auth, the Pack call, JSON back;
- **in process**: ``Pack.recall`` (and ``Pack.search``) on a handle of the same Pack in
  this process, the call the route makes.

Both log an episode per recall. Five calls of each first warm the model and the caches.
Prints the p50/p95 of each, the ratio of the p50s and the added milliseconds, with the
load average; writes ``out/bench/rest.json`` and ``.md`` (the README quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, find the parts

from recallbench.corpus import prepared_pack, run_meta
from recallbench.stats import LatencyStats, interleaved

from packs import Pack

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = Path("out/bench")
TOKEN = "bench-token"
WARM_CALLS = 5


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per path")
    parser.add_argument("--root", type=Path, default=None, help="keep the Pack here")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def start_api(root: Path, pack: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "WOLFIE_API_TOKEN": TOKEN}
    command = [
        sys.executable,
        "-m",
        "wolfie.cli",
        "api",
        "--pack",
        pack,
        "--root",
        str(root),
        "--port",
        "0",
    ]
    server = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    for line in server.stderr or ():
        if found := re.search(r" at (http://\S+) ", line):
            return server, found.group(1)
    raise RuntimeError(f"wolfie api did not start (exit {server.wait(30)})")


def measure(root: Path, pack: str, queries: list[str], seed: int) -> dict[str, LatencyStats]:
    server, url = start_api(root, pack)
    try:
        with (
            httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            ) as client,
            Pack.open(pack, root) as handle,
        ):

            def rest(route: str) -> Any:
                def call(query: str) -> None:
                    done = client.post(f"/v1/packs/{pack}/{route}", json={"query": query})
                    done.raise_for_status()

                return call

            paths = {
                "REST recall": rest("recall"),
                "in-process recall": lambda q: handle.recall(q),
                "REST search": rest("search"),
                "in-process search": lambda q: handle.search(q),
            }
            for query in queries[:WARM_CALLS]:
                for path in paths.values():
                    path(query)
            times = interleaved(paths, queries[WARM_CALLS:], seed)
    finally:
        server.terminate()
        server.wait(30)
    return {name: LatencyStats.of(seconds) for name, seconds in times.items()}


def markdown(meta: dict[str, Any], stats: dict[str, LatencyStats]) -> str:
    lines = [
        f"# REST vs in process ({meta['started']}, {meta['rows']:,} rows, "
        f"load {meta['load_before']} -> {meta['load_after']} on {meta['cpus']} CPUs)",
        "",
        "| path | calls | ms p50 | p95 |",
        "|---|---:|---:|---:|",
    ]
    for name, s in stats.items():
        lines.append(f"| {name} | {s.n} | {s.p50_ms:.1f} | {s.p95_ms:.1f} |")
    lines.append("")
    for call in ("recall", "search"):
        rest, local = stats[f"REST {call}"], stats[f"in-process {call}"]
        lines.append(
            f"- {call}: REST p50 {rest.p50_ms:.1f} ms = **{rest.p50_ms / local.p50_ms:.2f}x**"
            f" in process ({local.p50_ms:.1f} ms), +{rest.p50_ms - local.p50_ms:.1f} ms"
        )
    return "\n".join([*lines, ""])


def main() -> None:
    args = parse_args()
    root, pack, queries = prepared_pack(
        args.root, "rest", args.rows, args.calls + WARM_CALLS, args.seed
    )
    meta = run_meta(rows=args.rows, calls=args.calls)
    started = time.perf_counter()
    stats = measure(root, pack, queries, args.seed)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    meta["seconds"] = round(time.perf_counter() - started, 1)
    report = markdown(meta, stats)
    print(report)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "rest.md").write_text(report)
    payload = {"meta": meta, "stats": {name: vars(s) for name, s in stats.items()}}
    (OUT_DIR / "rest.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
