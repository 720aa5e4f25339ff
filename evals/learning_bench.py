"""The runtime-learning benchmark: similarity-only against utility-ranked retrieval.

Every method (``evals.learning.METHODS``) runs on its own copy of one Pack built from the
corpus, plays the same training queries in the same seeded order for several epochs, and
is scored on held-out queries after each epoch. The Pack is built (and the corpus
embedded) once per corpus and embedder, cached under ``--cache``, then copied per method.

How to run (from the repository root)::

    wolfie learn-bench                                  # committed man-page data
    wolfie learn-bench --corpus DIR --eval-set FILE     # any bundle + JSONL eval set
    python -m evals.learning_bench --sweep              # also the α/λ/k1/k2/bonus sweep

It prints the methods side by side (similarity, global-Q MemRL and contextual by
default) and writes ``learning.json``, ``learning.md`` and
``learning.png`` (and ``sweep.md`` with ``--sweep``) under ``--out``; ``docs/evals.md``
quotes them. The corpus is a bundle folder (``knowledge.jsonl``, optional
``memories.jsonl``); the eval set is the format of ``evals/evalset.py``, whose ``split``
field picks the held-out queries (queries without one are split by ``--heldout-share``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from evals.evalset import check_known_ids, load_eval_set, row_id
from evals.learning import METHODS, BenchQuery, Method, MethodRun, Rewards, run_method
from packs.bundles import KNOWLEDGE_FILE, MEMORIES_FILE, load_bundle
from packs.embeddings import EmbeddingProvider, Vectors, default_embedder
from packs.errors import InvalidInput
from packs.pack import Pack
from packs.recall.context import PRIORS
from packs.store import schemas

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "data" / "evals" / "manpages"
DEFAULT_EVAL_SET = DEFAULT_CORPUS / "queries.jsonl"
BASE_PACK = "base"
# One factor at a time around the Pack defaults (docs/settings.md).
SWEEP_GRID: dict[str, tuple[Any, ...]] = {
    "alpha": (0.1, 0.5, 0.8),
    "lam": (0.25, 0.75, 1.0),
    "k2": (1, 5),
    "k1": (5, 20),
    "explore_bonus": (0.0, 0.3),
}


@dataclass(frozen=True)
class BenchConfig:
    corpus: Path = DEFAULT_CORPUS
    eval_set: Path = DEFAULT_EVAL_SET
    out: Path = Path("out/learn-bench")
    cache: Path | None = None  # default: <out>/cache
    epochs: int = 5
    methods: tuple[str, ...] = ("similarity", "utility", "contextual")
    settings: Mapping[str, Any] = field(default_factory=dict)  # shared by every method
    heldout_share: float = 0.3
    seed: int = 0
    rewards: Rewards = field(default_factory=Rewards)


@dataclass(frozen=True)
class BenchResult:
    runs: list[MethodRun]
    settings: dict[str, dict[str, Any]]  # method -> Pack settings it ran with
    train: int
    heldout: int
    chunks: int
    seconds: float


class CachingEmbedder(EmbeddingProvider):
    """Embeds each distinct text once per process: queries repeat across epochs and
    methods. Same vector space as the wrapped provider, so Packs accept it."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.info = inner.info
        self.batch_size = inner.batch_size
        self._inner = inner
        self._cache: dict[str, np.ndarray] = {}

    def _embed_batch(self, texts: list[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, self._inner.embed(missing), strict=True):
                self._cache[text] = vector
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def build_base(corpus: Path, cache: Path, embedder: EmbeddingProvider) -> Path:
    """A root holding Pack ``base`` loaded with ``corpus``; reused while the corpus and
    the embedder are unchanged (the key hashes both)."""
    digest = hashlib.sha256(json.dumps(embedder.info.to_dict(), sort_keys=True).encode())
    for name in (KNOWLEDGE_FILE, MEMORIES_FILE):
        if (corpus / name).exists():
            digest.update((corpus / name).read_bytes())
    root = cache / f"{corpus.name}-{digest.hexdigest()[:12]}"
    if (root / "complete").exists():
        return root
    if not (corpus / KNOWLEDGE_FILE).exists():
        raise InvalidInput(f"Corpus {str(corpus)!r} has no {KNOWLEDGE_FILE}; pass a bundle folder.")
    shutil.rmtree(root, ignore_errors=True)
    with Pack.open(BASE_PACK, root, embedder=embedder) as pack:
        load_bundle(pack, corpus)
    (root / "complete").write_text("")
    return root


def bench_queries(
    config: BenchConfig, known_ids: set[str]
) -> tuple[list[BenchQuery], list[BenchQuery]]:
    """The eval set as (train, held-out) queries with row ids, checked against the Pack."""
    eval_set = load_eval_set(config.eval_set)
    check_known_ids(eval_set, known_ids, f"corpus {config.corpus.name!r}")
    empty = [q.line for q in eval_set.queries if not q.relevant]
    if empty:
        raise InvalidInput(
            f"{eval_set.path}: lines {empty} have no 'relevant' ids; the learning benchmark "
            "rewards episodes by relevant ids, so every query needs some."
        )
    rng = np.random.default_rng(config.seed)
    train: list[BenchQuery] = []
    heldout: list[BenchQuery] = []
    for q in eval_set.queries:
        split = q.split or ("heldout" if rng.random() < config.heldout_share else "train")
        query = BenchQuery(q.id, q.query, frozenset(row_id(r) for r in q.relevant))
        (heldout if split == "heldout" else train).append(query)
    if not train:
        raise InvalidInput(f"{eval_set.path}: no training queries; check the 'split' fields.")
    return train, heldout


def run_bench(
    config: BenchConfig,
    *,
    methods: Sequence[Method] | None = None,
) -> BenchResult:
    """Run every method on its own copy of the base Pack; see the module docstring."""
    started = time.perf_counter()
    chosen = list(methods) if methods is not None else [_method(n) for n in config.methods]
    embedder = CachingEmbedder(default_embedder())
    base = build_base(config.corpus, config.cache or config.out / "cache", embedder)
    with Pack.open(BASE_PACK, base, read_only=True) as pack:
        known = set(pack.store.scan(schemas.MEMORIES, ["id"])["id"].to_pylist())
    train, heldout = bench_queries(config, known)
    rng = np.random.default_rng(config.seed)
    orders = [rng.permutation(len(train)).tolist() for _ in range(config.epochs)]
    work = config.out / "packs"
    shutil.rmtree(work, ignore_errors=True)
    runs, settings = [], {}
    for method in chosen:
        shutil.copytree(base / BASE_PACK, work / method.name)
        wanted = {**config.settings, **method.settings}
        with Pack.open(method.name, work, embedder=embedder, settings=wanted) as pack:
            settings[method.name] = pack.settings.to_dict()
            run = run_method(pack, method, train, heldout, orders, config.rewards)
        runs.append(run)
    seconds = time.perf_counter() - started
    return BenchResult(runs, settings, len(train), len(heldout), len(known), seconds)


def _method(name: str) -> Method:
    if name not in METHODS:
        raise InvalidInput(f"Unknown method {name!r}; known methods are {sorted(METHODS)}.")
    return METHODS[name]


@dataclass(frozen=True)
class SweepRow:
    setting: str
    value: Any
    baseline: MethodRun
    learner: MethodRun


def sweep(config: BenchConfig, grid: Mapping[str, Sequence[Any]] = SWEEP_GRID) -> list[SweepRow]:
    """One factor at a time: the first two methods of ``config`` at each grid value.

    The baseline is re-run only when k1 or k2 change, the settings that move it.
    """
    baseline_name, learner_name = config.methods[:2]
    rows: list[SweepRow] = []
    baselines: dict[tuple[Any, Any], MethodRun] = {}
    for setting, values in grid.items():
        for value in values:
            shared = {**config.settings, setting: value}
            if setting == "k2" and int(value) > int(shared.get("k1", 10)):
                shared["k1"] = value
            key = (shared.get("k1"), shared.get("k2"))
            sub = replace(config, settings=shared)
            wanted = [_method(learner_name)]
            if key not in baselines:
                wanted.insert(0, _method(baseline_name))
            result = run_bench(sub, methods=wanted)
            baselines.setdefault(key, result.runs[0])
            rows.append(SweepRow(setting, value, baselines[key], result.runs[-1]))
    return rows


def shared_settings(**values: Any) -> dict[str, Any]:
    """The Pack settings given on the command line (None means the Pack default)."""
    return {key: value for key, value in values.items() if value is not None}


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from evals.learning_report import render_markdown, render_sweep, write_outputs

    parser = argparse.ArgumentParser(prog="python -m evals.learning_bench", description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--eval-set", type=Path, default=DEFAULT_EVAL_SET)
    parser.add_argument("--out", type=Path, default=Path("out/learn-bench"))
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--method", action="append", choices=sorted(METHODS))
    for name in ("k1", "k2"):
        parser.add_argument(f"--{name}", type=int, default=None)
    for name in ("alpha", "lam", "explore-bonus", "context-theta", "context-kappa"):
        parser.add_argument(f"--{name}", type=float, default=None)
    parser.add_argument("--context-prior", choices=PRIORS, default=None)
    parser.add_argument("--heldout-share", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args(argv)
    config = BenchConfig(
        corpus=args.corpus, eval_set=args.eval_set, out=args.out, cache=args.cache,
        epochs=args.epochs, methods=tuple(args.method or BenchConfig.methods),
        settings=shared_settings(
            k1=args.k1, k2=args.k2, alpha=args.alpha, lam=args.lam,
            explore_bonus=args.explore_bonus, context_theta=args.context_theta,
            context_kappa=args.context_kappa, context_prior=args.context_prior,
        ),
        heldout_share=args.heldout_share, seed=args.seed,
    )  # fmt: skip
    result = run_bench(config)
    rows = sweep(config) if args.sweep else []
    print(render_markdown(result, config))
    if rows:
        print(render_sweep(rows))
    for path in write_outputs(result, config, rows):
        print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
