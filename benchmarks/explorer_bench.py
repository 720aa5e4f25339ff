"""The explorer's pages and the explanation's cost at 100k memories (issue 44's goals).

How to run (from the repo root, with the venv active)::

    python benchmarks/explorer_bench.py                  # 100,000 rows
    python benchmarks/explorer_bench.py --rows 20000 --repeats 10

Builds a Pack of ``--rows`` rows straight into ``memories`` (half memories, half
knowledge; benchmarks/recallbench/corpus.py with its fast word-hash embedder), rewards
``--rewarded`` recalls so the explanations have evidence to read, then times, in process
through the ASGI app (FastAPI's TestClient, the whole request: guard, front door, template):

- the memory table's first page (``GET /ui/p/bench/memories``, default sort, 50 rows),
  sorted by utility, and a text search;
- one memory's page (``GET /ui/p/bench/m/{id}``) of a rewarded memory;
- ``Pack.recall`` p50 with ``explain`` off and on, alternating, the same questions.

Goals (issue 44): each page under 300 ms; recall with explain at most 2x its p50 without.
Prints a Markdown table and writes ``out/bench/explorer_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root

from fastapi.testclient import TestClient

from benchmarks.recallbench.corpus import WordHashEmbedder, build_pack, generate_sentences
from packs import Pack
from wolfie.api.app import build_app
from wolfie.api.deps import Served
from wolfie.front_door import ScopeGuard

OUT = Path("out/bench")
TOKEN = "bench"
PAGE_GOAL_MS = 300.0  # issue 44
EXPLAIN_GOAL = 2.0  # issue 44: explain at most 2x recall's p50


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    fn()  # warm: caches, templates
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--rewarded", type=int, default=200)
    parser.add_argument("--recalls", type=int, default=200)
    args = parser.parse_args(argv)
    embedder = WordHashEmbedder()
    texts = generate_sentences(2_000, random.Random(7))
    vectors = embedder.embed(texts)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        built = build_pack(root, "bench", args.rows, texts, vectors, 7, embedder)
        with Pack.open("bench", root, embedder=embedder) as pack:
            questions = random.Random(11).sample(texts, min(len(texts), args.recalls))
            for i, question in enumerate(questions[: args.rewarded]):
                episode = pack.recall(question)
                pack.feedback(episode.episode_id or "", 1.0 if i % 3 else -0.5)
            pack.flush()
            rewarded = pack.recall(questions[0]).ids[0]
            pack.flush()
            client = TestClient(
                build_app(Served({"bench": pack}, ScopeGuard(None)), TOKEN),
                headers={"Authorization": f"Bearer {TOKEN}"},
            )

            def get(path: str) -> Callable[[], Any]:
                def fetch() -> None:
                    response = client.get(path)
                    assert response.status_code == 200, response.text[:300]

                return fetch

            pages = {
                "memory table, first page": get("/ui/p/bench/memories"),
                "memory table, by utility": get("/ui/p/bench/memories?sort=utility"),
                "memory table, text search": get("/ui/p/bench/memories?q=runbook"),
                "one memory": get(f"/ui/p/bench/m/{rewarded}"),
            }
            results: dict[str, Any] = {"rows": args.rows, "build_s": round(built, 1)}
            for name, fetch in pages.items():
                results[name] = statistics.median(timed(fetch, args.repeats))
            off, on = [], []
            for question in questions:
                for explain, into in ((False, off), (True, on)):
                    start = time.perf_counter()
                    pack.recall(question, explain=explain)
                    into.append((time.perf_counter() - start) * 1000)
            results["recall p50, explain off"] = statistics.median(off)
            results["recall p50, explain on"] = statistics.median(on)
            results["explain ratio"] = results["recall p50, explain on"] / statistics.median(off)
    print(f"| {args.rows:,} rows | ms (p50) | goal |\n|---|---|---|")
    for name in pages:
        print(f"| {name} | {results[name]:.1f} | < {PAGE_GOAL_MS:.0f} |")
    for name in ("recall p50, explain off", "recall p50, explain on"):
        print(f"| {name} | {results[name]:.1f} | |")
    print(f"| explain on / off | {results['explain ratio']:.2f}x | <= {EXPLAIN_GOAL:.0f}x |")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "explorer_bench.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
