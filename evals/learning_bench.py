"""The runtime-learning benchmark: train, paraphrase and held-out success, side by side.

Every method (``evals.learning.METHODS``; the no-feedback baseline always runs too) plays
one fold's training questions (``evals/protocol.py``) in the same seeded order for
several epochs, on its own copy of one Pack built from the corpus, rewarded as the
feedback model says (``evals/feedback_models.py``). After the last epoch the fold's
paraphrases and held-out questions are ranked. Each seed gives its own query orders and
reward plan; the fold is fixed by the split seed. Lift is in points over the Pack without
feedback in the same seed. The Pack is built (the corpus embedded) once per corpus and
embedder, cached under ``--cache``, then copied per method and seed, and query vectors
are cached for the whole process.

How to run (from the repository root)::

    wolfie learn-bench                                   # man pages, test fold, seeds 0-2
    wolfie learn-bench --corpus data/evals/pydocs --epochs 3 --flip 0.2 --sparse 0.5
    python -m evals.learning_bench --corpus data/evals/pydocs --seeds 0 1 2 --k2 1

It prints a Markdown table (mean and min..max over seeds) and writes ``learning.md``,
``learning.json`` and ``learning.png`` under ``--out``; ``docs/evals.md`` quotes them.
Tune on ``--split validation``; report ``--split test``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evals.baselines import baseline_rates
from evals.evalset import check_known_ids, load_eval_set
from evals.feedback_models import CREDITS, FeedbackModel, reward_plan
from evals.learning import METHODS, NO_FEEDBACK, SIMILARITY, Method, MethodRun, run_method
from evals.learning_config import BASELINE, DEFAULT_CORPUS, METRICS, BenchConfig, BenchResult
from evals.learning_report import render_markdown, write_outputs
from evals.protocol import SPLIT_CHOICES, Protocol, build_protocol, load_paraphrases
from packs.bundles import KNOWLEDGE_FILE, MEMORIES_FILE, load_bundle
from packs.embeddings import EmbeddingProvider, Vectors, default_embedder
from packs.errors import InvalidInput
from packs.learning.strategies import PRIORS
from packs.pack import Pack
from packs.settings import PackSettings

BASE_PACK = "base"


class CachingEmbedder(EmbeddingProvider):
    """Embeds each distinct text once per process: queries repeat across epochs, methods
    and seeds. Same vector space as the wrapped provider, so Packs accept it."""

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


def load_protocol(config: BenchConfig, known_ids: set[str]) -> Protocol:
    """The fold's questions, every id checked against the corpus."""
    eval_set = load_eval_set(config.eval_set_path)
    check_known_ids(eval_set, known_ids, f"corpus {config.corpus.name!r}")
    empty = [q.line for q in eval_set.queries if not q.relevant]
    if empty:
        raise InvalidInput(
            f"{eval_set.path}: lines {empty} have no 'relevant' ids; the learning benchmark "
            "rewards episodes by relevant ids, so every query needs some."
        )
    paraphrases = load_paraphrases(config.paraphrases_path)
    return build_protocol(
        eval_set,
        paraphrases,
        config.split,
        seed=config.split_seed,
        share=config.validation_share,
    )


def method_settings(method: Method, shared: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The full Pack settings ``method`` runs with: the Pack defaults of this Wolfie, the
    shared command-line settings, then the method's own; and pinned names now unknown."""
    pinned, unknown = method.known_settings()
    resolved = PackSettings.from_dict({**shared, **pinned}).to_dict()
    return resolved, unknown


def run_bench(config: BenchConfig, *, methods: Sequence[Method] | None = None) -> BenchResult:
    """Run the baseline and every method in every seed; see the module docstring."""
    started = time.perf_counter()
    chosen = list(methods) if methods is not None else [method(n) for n in config.methods]
    chosen = [NO_FEEDBACK, *(m for m in chosen if m.name != BASELINE)]
    embedder = CachingEmbedder(default_embedder())
    base = build_base(config.corpus, config.cache or config.out / "cache", embedder)
    with Pack.open(BASE_PACK, base, read_only=True) as pack:
        known = set(pack.query("items", columns=["id"])["id"].to_list())
        protocol = load_protocol(config, known)
        questions = (protocol.train, protocol.paraphrases, protocol.heldout)
        k2 = PackSettings.from_dict(dict(config.settings)).ranking.k2
        baselines = baseline_rates(pack, embedder, dict(zip(METRICS, questions, strict=True)), k2)
    work = config.out / "packs"
    shutil.rmtree(work, ignore_errors=True)
    settings: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for m in chosen:
        settings[m.name], unknown = method_settings(m, dict(config.settings))
        if unknown:
            notes.append(f"{m.name}: pinned settings {unknown} are unknown to this Wolfie.")
    runs: list[MethodRun] = []
    for seed in config.seeds:
        rng = np.random.default_rng(seed)
        orders = [rng.permutation(len(protocol.train)).tolist() for _ in range(config.epochs)]
        plan = reward_plan(config.feedback, seed, config.epochs, len(protocol.train))
        for m in chosen:
            twin = _same_run(m, settings, runs, seed, config.seeds[0], config.feedback)
            if twin is not None:
                runs.append(replace(twin, method=m.name, seed=seed))
                continue
            copy = f"s{seed}-{m.name}"
            shutil.copytree(base / BASE_PACK, work / copy)
            with Pack.open(copy, work, embedder=embedder, settings=settings[m.name]) as pack:
                run = run_method(
                    pack,
                    m,
                    seed,
                    questions,
                    orders,
                    config.feedback,
                    plan,
                    measure_before=m is NO_FEEDBACK,
                )
            runs.append(replace(run, method=m.name))
    notes += _reuse_notes(chosen, settings, config.feedback)
    seconds = time.perf_counter() - started
    return BenchResult(runs, settings, protocol.sizes(), len(known), seconds, notes, baselines)


def _same_run(
    m: Method,
    settings: dict[str, dict[str, Any]],
    runs: list[MethodRun],
    seed: int,
    first_seed: int,
    feedback: FeedbackModel,
) -> MethodRun | None:
    """A finished run that ``m`` would repeat exactly: the similarity ranking ignores
    rewards and order (one run serves every seed), and a method whose full settings and
    credit equal an earlier one's in this seed plays the same episodes."""
    if m.name == SIMILARITY.name and seed != first_seed:
        return next(r for r in runs if r.method == m.name)
    credit = m.credit or feedback.credit
    for run in runs:
        other = METHODS.get(run.method)
        if run.seed != seed or other is None or other.name in (m.name, BASELINE):
            continue
        if settings[other.name] == settings[m.name] and (other.credit or feedback.credit) == credit:
            return run
    return None


def _reuse_notes(
    chosen: list[Method], settings: dict[str, dict[str, Any]], feedback: FeedbackModel
) -> list[str]:
    notes = []
    names = [m.name for m in chosen]
    if SIMILARITY.name in names:
        notes.append(
            "similarity ranks by cosine alone, whatever the rewards and the order: it ran "
            "once and its rates hold for every seed."
        )
    for i, m in enumerate(chosen):
        for other in chosen[:i]:
            if BASELINE in (m.name, other.name) or settings[m.name] != settings[other.name]:
                continue
            if (m.credit or feedback.credit) == (other.credit or feedback.credit):
                notes.append(
                    f"{m.name} has the same settings as {other.name}: one run serves both."
                )
                break
    return notes


def method(name: str) -> Method:
    if name not in METHODS:
        raise InvalidInput(f"Unknown method {name!r}; known methods are {sorted(METHODS)}.")
    return METHODS[name]


def shared_settings(overrides: Sequence[str] = (), **values: Any) -> dict[str, Any]:
    """The Pack settings given on the command line (None means the Pack default), and
    ``overrides`` as ``KEY=VALUE`` (the value read as JSON, else as a string)."""
    chosen = {key: value for key, value in values.items() if value is not None}
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"--set takes KEY=VALUE (e.g. lexical_weight=0.4), got {item!r}.")
        try:
            chosen[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            chosen[key.strip()] = raw
    PackSettings.from_dict(chosen)  # unknown keys and bad values fail here, not mid-run
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m evals.learning_bench", description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--eval-set", type=Path, default=None)
    parser.add_argument("--paraphrases", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("out/learn-bench"))
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--method", action="append", choices=sorted(METHODS))
    parser.add_argument("--split", choices=SPLIT_CHOICES, default="test")
    parser.add_argument("--flip", type=float, default=0.0)
    parser.add_argument("--sparse", type=float, default=1.0)
    parser.add_argument("--credit", choices=CREDITS, default="episode")
    for name in ("k1", "k2"):
        parser.add_argument(f"--{name}", type=int, default=None)
    for name in ("alpha", "lam", "explore-bonus", "context-theta", "context-kappa"):
        parser.add_argument(f"--{name}", type=float, default=None)
    parser.add_argument("--context-prior", choices=sorted(PRIORS), default=None)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any Pack setting, every method; e.g. thompson_scale=0.3",
    )
    args = parser.parse_args(argv)
    config = BenchConfig(
        corpus=args.corpus,
        eval_set=args.eval_set,
        paraphrases=args.paraphrases,
        out=args.out,
        cache=args.cache,
        epochs=args.epochs,
        seeds=tuple(args.seeds),
        methods=tuple(args.method or BenchConfig.methods),
        split=args.split,
        feedback=FeedbackModel(flip=args.flip, sparse=args.sparse, credit=args.credit),
        settings=shared_settings(
            args.set,
            k1=args.k1,
            k2=args.k2,
            alpha=args.alpha,
            lam=args.lam,
            explore_bonus=args.explore_bonus,
            context_theta=args.context_theta,
            context_kappa=args.context_kappa,
            context_prior=args.context_prior,
        ),
    )
    result = run_bench(config)
    print(render_markdown(result, config))
    for path in write_outputs(result, config):
        print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
