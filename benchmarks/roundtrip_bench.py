"""The round trip a user feels: the ``wolfie`` CLI cold, and a warm MCP server over HTTP.

How to run (from the repository root; ``PYTHONPATH=.`` so the checkout's code is used)::

    PYTHONPATH=. .venv/bin/python benchmarks/roundtrip_bench.py            # 10k rows
    PYTHONPATH=. .venv/bin/python benchmarks/roundtrip_bench.py --rows 2000 --calls 20

A Pack of ``--rows`` rows (perturbed copies of really embedded task sentences, half
memories: ``benchmarks/recallbench/corpus.py``) is built once under ``--root``. Then:

- **CLI, cold**: ``wolfie --help``, a usage error, a missing-file ``wolfie ingest`` and
  ``wolfie recall QUERY`` on that Pack, each a new process (``sys.executable -m
  wolfie.cli``), ``--repeats`` times interleaved; wall seconds, median and max.
- **MCP over HTTP, warm**: ``wolfie mcp --http`` started once on the Pack; the official
  SDK's client (``streamable_http_client``) opens one session and calls ``recall`` with
  ``--calls`` distinct queries, then ``search``; per-call ms p50/p95/p99. A new session
  per call (connect, initialize, call) is timed beside it, since that is what a client
  that does not keep its session pays.

Goals (issue 24): ``--help`` and usage errors < 1 s, cold recall < 2 s at 10k rows, warm
MCP recall < 100 ms p50 at 10k rows. The load average is printed with the figures; prints
Markdown and writes ``out/bench/roundtrip.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, find the parts

from recallbench.corpus import prepared_pack, run_meta
from recallbench.stats import LatencyStats

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = Path("out/bench")
TOKEN = "bench-token"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5, help="cold CLI runs per command")
    parser.add_argument("--calls", type=int, default=100, help="warm MCP calls")
    parser.add_argument("--root", type=Path, default=None, help="keep the Pack here")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "WOLFIE_ROOT": str(root),
        "PYTHONPATH": str(REPO),
        "WOLFIE_MCP_TOKEN": TOKEN,
    }


def cli(root: Path, *args: str) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *args],
        cwd=REPO,
        env=env(root),
        capture_output=True,
        timeout=600,
    )
    return time.perf_counter() - start, done.returncode


def cold_cli(root: Path, pack: str, repeats: int, queries: list[str]) -> dict[str, Any]:
    commands = {
        "wolfie --help": ["--help"],
        "usage error (unknown option)": ["recall", "x", "--no-such-option"],
        "wolfie ingest missing.pdf": ["ingest", str(root / "missing.pdf"), "--pack", pack],
        "wolfie recall QUERY (cold)": None,
    }
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    codes: dict[str, set[int]] = {name: set() for name in commands}
    for r in range(repeats):
        for name, args in commands.items():
            args = args or ["recall", queries[r], "--pack", pack, "--json"]
            elapsed, code = cli(root, *args)
            seconds[name].append(elapsed)
            codes[name].add(code)
    return {
        name: {"median_s": statistics.median(s), "max_s": max(s), "exit_codes": sorted(codes[name])}
        for name, s in seconds.items()
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def mcp_calls(url: str, queries: list[str]) -> dict[str, LatencyStats]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {TOKEN}"}
    times: dict[str, list[float]] = {"recall": [], "search": [], "new session + recall": []}
    client = create_mcp_http_client(headers=headers)
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for query in queries[:5]:  # warm: the model loaded, the caches filled
            await session.call_tool("recall", {"query": query})
        for tool in ("recall", "search"):
            for query in queries[5:]:
                start = time.perf_counter()
                result = await session.call_tool(tool, {"query": query})
                times[tool].append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed: {result.content}")
    for query in queries[5:25]:
        start = time.perf_counter()
        fresh = create_mcp_http_client(headers=headers)
        async with (
            fresh,
            streamable_http_client(url, http_client=fresh) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.call_tool("recall", {"query": query})
        times["new session + recall"].append(time.perf_counter() - start)
    return {name: LatencyStats.of(t) for name, t in times.items()}


def warm_mcp(root: Path, pack: str, queries: list[str]) -> dict[str, Any]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "wolfie.cli",
        "mcp",
        "--pack",
        pack,
        "--http",
        f"127.0.0.1:{port}",
    ]
    server = subprocess.Popen(
        command, cwd=REPO, env=env(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        start = time.perf_counter()
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.perf_counter() - start > 120:
                    raise RuntimeError("wolfie mcp --http did not start") from None
                time.sleep(0.2)
        listening_s = time.perf_counter() - start
        stats = asyncio.run(mcp_calls(url, queries))
    finally:
        server.terminate()
        server.wait(30)
    return {"listening_s": listening_s, "calls": {n: vars(s) for n, s in stats.items()}}


def markdown(meta: dict[str, Any], cold: dict[str, Any], warm: dict[str, Any]) -> str:
    lines = [
        f"# Round trip ({meta['started']}, {meta['rows']:,} rows, load {meta['load_before']}"
        f" -> {meta['load_after']} on {meta['cpus']} CPUs)",
        "",
        "| cold CLI command | median s | max s | exit codes |",
        "|---|---:|---:|---|",
    ]
    for name, row in cold.items():
        lines.append(
            f"| {name} | {row['median_s']:.2f} | {row['max_s']:.2f} | "
            f"{', '.join(map(str, row['exit_codes']))} |"
        )
    lines += [
        "",
        f"MCP server listening after {warm['listening_s']:.1f} s.",
        "",
        "| MCP over HTTP, SDK client | ms p50 | p95 | p99 |",
        "|---|---:|---:|---:|",
    ]
    for name, s in warm["calls"].items():
        lines.append(f"| {name} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {s['p99_ms']:.1f} |")
    return "\n".join([*lines, ""])


def main() -> None:
    args = parse_args()
    root, pack, queries = prepared_pack(
        args.root, "roundtrip", args.rows, args.calls + 40, args.seed
    )
    meta = run_meta(rows=args.rows)
    cold = cold_cli(root, pack, args.repeats, queries)
    warm = warm_mcp(root, pack, queries[: args.calls + 5])
    meta["load_after"] = round(os.getloadavg()[0], 2)
    report = markdown(meta, cold, warm)
    print(report)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "roundtrip.md").write_text(report)
    payload = {"meta": meta, "cold_cli": cold, "warm_mcp": warm}
    (OUT_DIR / "roundtrip.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
