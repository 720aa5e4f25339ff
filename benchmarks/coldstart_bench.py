"""Cold start: what a fresh process pays before it answers (issue 45).

How to run (from the repository root, with the venv's Python, so ``wolfie`` is the venv's
console script and the checkout's code is the installed, editable one)::

    .venv/bin/python benchmarks/coldstart_bench.py                  # 10k rows, 7 rounds
    .venv/bin/python benchmarks/coldstart_bench.py --rounds 3 --rows 2000

Every path runs as a new process, ``--rounds`` times, the paths interleaved within each
round so that the load of the shared machine falls on all of them alike; the table gives
medians (and the max) of wall seconds:

- the floors: ``python -c pass``, ``python -c "import numpy, pyarrow, pydantic"`` and
  ``python -c "import lancedb"``;
- ``python -c "import packs"`` and ``python -c "from packs import Pack"``;
- ``wolfie --help``;
- ``wolfie recall QUERY --json`` on a Pack of ``--rows`` rows (built once under
  ``--root``: ``benchmarks/recallbench/corpus.py``), a distinct query each round;
- ``wolfie api --pack P --port 0`` until ``GET /healthz`` answers 200;
- ``wolfie mcp --pack P`` (stdio) until it answers its first request, ``initialize``.

Goals (issue 45): ``from packs import Pack`` at most 3x ``import numpy, pyarrow,
pydantic``; cold recall at most 1.5 s; ``wolfie --help`` at most 0.3 s; api to
``/healthz`` at most 2 s. The load average is printed with the figures. Prints Markdown
and writes ``out/bench/coldstart.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, find the parts

from recallbench.corpus import prepared_pack, run_meta

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = Path("out/bench")
PYTHON = sys.executable
WOLFIE = str(Path(PYTHON).with_name("wolfie"))
ANNOUNCED = re.compile(r" at (http://\S+) ")
TIMEOUT_S = 300
GOALS = {  # issue 45
    "from packs import Pack": "≤ 3x numpy+pyarrow+pydantic",
    "wolfie --help": "≤ 0.3 s",
    "wolfie recall (cold)": "≤ 1.5 s",
    "wolfie api → /healthz": "≤ 2 s",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7, help="fresh processes per path")
    parser.add_argument("--root", type=Path, default=None, help="keep the Pack here")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def env(root: Path) -> dict[str, str]:
    drop = ("WOLFIE_API_TOKEN", "WOLFIE_MCP_TOKEN")
    return {
        **{k: v for k, v in os.environ.items() if k not in drop},
        "WOLFIE_ROOT": str(root),
        "HF_HUB_OFFLINE": "1",
        "DO_NOT_TRACK": "1",
    }


def run(root: Path, *command: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=root, env=env(root), capture_output=True, text=True, timeout=TIMEOUT_S
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed


def api_to_healthz(root: Path, pack: str) -> float:
    """Spawn ``wolfie api`` and poll ``/healthz`` from the moment it names its URL."""
    start = time.perf_counter()
    server = subprocess.Popen(
        [WOLFIE, "api", "--pack", pack, "--port", "0"],
        cwd=root,
        env=env(root),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = ""
        while (match := ANNOUNCED.search(seen)) is None:
            line = server.stderr.readline() if server.stderr else ""
            if not line and server.poll() is not None:
                raise RuntimeError(f"wolfie api exited: {seen[-2000:]}")
            seen += line
        while True:
            try:
                if httpx.get(f"{match.group(1)}/healthz", timeout=5).status_code == 200:
                    return time.perf_counter() - start
            except httpx.TransportError:
                time.sleep(0.01)
    finally:
        server.terminate()
        server.wait(30)


def mcp_first_answer(root: Path, pack: str) -> float:
    """Spawn ``wolfie mcp`` (stdio) with ``initialize`` already written; time its answer."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "coldstart-bench", "version": "1"},
        },
    }
    start = time.perf_counter()
    server = subprocess.Popen(
        [WOLFIE, "mcp", "--pack", pack],
        cwd=root,
        env=env(root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        elapsed = time.perf_counter() - start
        if answer.get("id") != 1 or "result" not in answer:
            raise RuntimeError(f"wolfie mcp answered {answer}")
        return elapsed
    finally:
        server.terminate()
        server.wait(30)


def paths(root: Path, pack: str, queries: list[str]) -> dict[str, Callable[[int], float]]:
    def python(code: str) -> Callable[[int], float]:
        return lambda _: run(root, PYTHON, "-c", code)

    return {
        "python -c pass": python("pass"),
        "import numpy, pyarrow, pydantic": python("import numpy, pyarrow, pydantic"),
        "import lancedb": python("import lancedb"),
        "import packs": python("import packs"),
        "from packs import Pack": python("from packs import Pack"),
        "wolfie --help": lambda _: run(root, WOLFIE, "--help"),
        "wolfie recall (cold)": lambda r: run(
            root, WOLFIE, "recall", queries[r], "--pack", pack, "--json"
        ),
        "wolfie api → /healthz": lambda _: api_to_healthz(root, pack),
        "wolfie mcp → first answer": lambda _: mcp_first_answer(root, pack),
    }


def measure(root: Path, pack: str, rounds: int, queries: list[str]) -> dict[str, Any]:
    timed = paths(root, pack, queries)
    for probe in timed.values():  # one unrecorded round: the OS file cache, .pyc files
        probe(rounds)
    seconds: dict[str, list[float]] = {name: [] for name in timed}
    for r in range(rounds):
        for name, probe in timed.items():
            seconds[name].append(probe(r))
    return {
        name: {"median_s": statistics.median(s), "max_s": max(s), "runs": s}
        for name, s in seconds.items()
    }


def markdown(meta: dict[str, Any], rows: dict[str, Any]) -> str:
    floor = rows["import numpy, pyarrow, pydantic"]["median_s"]
    lines = [
        f"# Cold start ({meta['started']}, {meta['rows']:,} rows, {meta['rounds']} rounds, "
        f"load {meta['load_before']} -> {meta['load_after']} on {meta['cpus']} CPUs)",
        "",
        "| path (a fresh process) | median s | max s | x numpy+pyarrow+pydantic | goal |",
        "|---|---:|---:|---:|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['median_s']:.2f} | {row['max_s']:.2f} "
            f"| {row['median_s'] / floor:.1f}x | {GOALS.get(name, '')} |"
        )
    return "\n".join([*lines, ""])


def main() -> None:
    args = parse_args()
    root, pack, queries = prepared_pack(
        args.root, "coldstart", args.rows, args.rounds + 1, args.seed
    )
    meta = run_meta(rows=args.rows, rounds=args.rounds)
    rows = measure(root, pack, args.rounds, queries)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    report = markdown(meta, rows)
    print(report)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "coldstart.md").write_text(report)
    (OUT_DIR / "coldstart.json").write_text(json.dumps({"meta": meta, "paths": rows}, indent=2))


if __name__ == "__main__":
    main()
