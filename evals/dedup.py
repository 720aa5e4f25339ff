"""Choose the dedup threshold by measurement on labelled near-duplicate intents.

``Pack.remember`` merges a new memory into the nearest stored one when the cosine of
their intent embeddings is at least ``dedup_threshold``. This eval embeds every pair in
``packs/data/dedup/intent_pairs.jsonl`` with the default embedder, sweeps the threshold and
picks the one with the best F0.5: precision counts twice as much as recall, because a
false merge loses a memory while a missed merge only stores a near-copy.

How to run (from the repository root)::

    python -m evals.dedup [--pairs packs/data/dedup/intent_pairs.jsonl] [--out out/dedup]

It prints the sweep and writes ``dedup.json`` and ``dedup.md`` under ``--out``;
``docs/dedup.md`` quotes them.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evals.jsonl import read_objects
from packs.data import bundled
from packs.errors import InvalidInput

DEFAULT_PAIRS = bundled("dedup", "intent_pairs.jsonl")  # package data: a wheel ships it
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.01 * i, 2) for i in range(46))
SHOWN_THRESHOLDS: tuple[float, ...] = (0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95)
BOOTSTRAP_RESAMPLES = 2000
KINDS = ("seed", "light_edit", "paraphrase", "hard_negative", "easy_negative")


@dataclass(frozen=True)
class IntentPair:
    a: str
    b: str
    label: int  # 1: one memory should absorb the other; 0: different intents
    domain: str
    kind: str


@dataclass(frozen=True)
class MergeScore:
    """Confusion counts and scores of "merge when cosine >= threshold"."""

    threshold: float
    precision: float
    recall: float
    f1: float
    f05: float
    tp: int
    fp: int
    fn: int
    tn: int

    def f_beta(self, beta: float) -> float:
        return f_beta(self.precision, self.recall, beta)


def f_beta(precision: float, recall: float, beta: float) -> float:
    """F-beta = (1+b²)·P·R / (b²·P + R); 0.0 when P and R are both 0.

    beta < 1 weights precision more (beta = 0.5: precision counts twice as much).
    """
    b2 = beta * beta
    denominator = b2 * precision + recall
    return 0.0 if denominator == 0 else (1 + b2) * precision * recall / denominator


def merge_precision_recall(
    labels: Sequence[int], similarities: Sequence[float], threshold: float
) -> MergeScore:
    """Score merging every pair whose cosine is >= ``threshold`` against the labels.

    precision = tp/(tp+fp), and 0.0 when nothing is merged (tp+fp == 0);
    recall = tp/(tp+fn), and 0.0 when there are no positives (tp+fn == 0).
    """
    if len(labels) != len(similarities):
        raise InvalidInput(
            f"Got {len(labels)} labels but {len(similarities)} similarities; pass one per pair."
        )
    if not math.isfinite(threshold):
        raise InvalidInput(f"threshold must be finite, got {threshold!r}.")
    bad = sorted({label for label in labels if label not in (0, 1)})
    if bad:
        raise InvalidInput(f"Labels must be 0 or 1; got {bad}.")
    truth = np.asarray(labels, dtype=bool)
    merged = np.asarray(similarities, dtype=np.float64) >= threshold
    tp = int(np.sum(merged & truth))
    fp = int(np.sum(merged & ~truth))
    fn = int(np.sum(~merged & truth))
    tn = int(np.sum(~merged & ~truth))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return MergeScore(
        threshold=threshold,
        precision=precision,
        recall=recall,
        f1=f_beta(precision, recall, 1.0),
        f05=f_beta(precision, recall, 0.5),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
    )


def sweep(
    labels: Sequence[int], similarities: Sequence[float], thresholds: Iterable[float]
) -> list[MergeScore]:
    """One :class:`MergeScore` per threshold, in the order given."""
    return [merge_precision_recall(labels, similarities, t) for t in thresholds]


def best_threshold(scores: Sequence[MergeScore], beta: float = 0.5) -> MergeScore:
    """The score with the highest F-beta; ties go to the highest threshold.

    beta = 0.5 by default because a false merge loses a memory while a missed merge
    only stores a near-copy. Among equal F-beta the higher threshold merges no more
    pairs, so it is the conservative choice.
    """
    if not scores:
        raise InvalidInput("best_threshold needs at least one score; sweep some thresholds.")
    if not beta > 0:
        raise InvalidInput(f"beta must be positive, got {beta!r}.")
    return max(scores, key=lambda s: (s.f_beta(beta), s.threshold))


def bootstrap(
    labels: Sequence[int],
    similarities: Sequence[float],
    thresholds: Sequence[float],
    at: float,
    *,
    beta: float = 0.5,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> dict[str, list[float]]:
    """5th, 50th and 95th percentiles over pair resamples (seeded, with replacement).

    Reports the threshold :func:`best_threshold` would choose on each resample, and the
    precision and recall at the fixed threshold ``at``: how much the choice and its scores
    move with the sample of pairs.
    """
    truth = np.asarray(labels, dtype=bool)[:, None]
    merged = np.asarray(similarities, dtype=np.float64)[:, None] >= np.asarray(thresholds)
    rng = np.random.default_rng(seed)
    n = len(labels)
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(resamples)])
    tp = weights @ (merged & truth)
    fp = weights @ (merged & ~truth)
    fn = weights @ (~merged & truth)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        b2 = beta * beta
        denominator = b2 * precision + recall
        fb = np.where(denominator > 0, (1 + b2) * precision * recall / denominator, 0.0)
    # argmax over the reversed columns breaks ties towards the highest threshold.
    best = len(thresholds) - 1 - np.argmax(fb[:, ::-1], axis=1)
    column = int(np.argmin(np.abs(np.asarray(thresholds) - at)))
    quantiles = (5, 50, 95)

    def percentiles(values: np.ndarray) -> list[float]:
        return [round(float(v), 4) for v in np.percentile(values, quantiles)]

    return {
        "chosen_threshold": percentiles(np.asarray(thresholds)[best]),
        "precision": percentiles(precision[:, column]),
        "recall": percentiles(recall[:, column]),
    }


def load_pairs(path: str | Path) -> list[IntentPair]:
    """Read ``{"a", "b", "label", "domain", "kind"}`` JSON lines; blank lines are skipped."""
    return read_objects(path, _parse_pair, "pairs")


def _parse_pair(obj: dict[str, Any], where: str) -> IntentPair:
    for key in ("a", "b", "domain", "kind"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise InvalidInput(f"{where}: {key!r} must be a non-empty string.")
    label = obj.get("label")
    if isinstance(label, bool) or label not in (0, 1):
        raise InvalidInput(f"{where}: 'label' must be 0 or 1, got {label!r}.")
    if obj["kind"] not in KINDS:
        raise InvalidInput(f"{where}: unknown kind {obj['kind']!r}; use one of {list(KINDS)}.")
    return IntentPair(obj["a"], obj["b"], label, obj["domain"], obj["kind"])


def pair_cosines(pairs: Sequence[IntentPair]) -> list[float]:
    """Cosine of each pair's intents under the default embedder (each text embedded once)."""
    from packs.embeddings import default_embedder

    texts = sorted({p.a for p in pairs} | {p.b for p in pairs})
    vectors = default_embedder().embed(texts).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = {text: i for i, text in enumerate(texts)}
    return [float(vectors[index[p.a]] @ vectors[index[p.b]]) for p in pairs]


def evaluate(
    pairs: Sequence[IntentPair], cosines: Sequence[float], beta: float = 0.5
) -> dict[str, Any]:
    """Everything the report shows, as plain JSON-ready values."""
    from packs.settings import DEFAULT_DEDUP_THRESHOLD

    labels = [p.label for p in pairs]
    scores = sweep(labels, cosines, SWEEP_THRESHOLDS)
    chosen = best_threshold(scores, beta)
    at = chosen.threshold

    def subset(key: str, value: str) -> dict[str, Any]:
        idx = [i for i, p in enumerate(pairs) if getattr(p, key) == value]
        score = merge_precision_recall([labels[i] for i in idx], [cosines[i] for i in idx], at)
        merged = sum(cosines[i] >= at for i in idx)
        return {"n": len(idx), "merged": merged, "merge_rate": merged / len(idx), **asdict(score)}

    errors = [
        {**asdict(p), "cosine": round(c, 4)}
        for p, c in zip(pairs, cosines, strict=True)
        if (c >= at) != bool(p.label)
    ]
    return {
        "n_pairs": len(pairs),
        "n_positive": sum(labels),
        "beta": beta,
        "chosen": asdict(chosen),
        "default_threshold": DEFAULT_DEDUP_THRESHOLD,
        "at_default": asdict(merge_precision_recall(labels, cosines, DEFAULT_DEDUP_THRESHOLD)),
        "sweep": [asdict(s) for s in scores],
        "per_kind": {k: subset("kind", k) for k in KINDS if any(p.kind == k for p in pairs)},
        "per_domain": {d: subset("domain", d) for d in sorted({p.domain for p in pairs})},
        "seeds": [
            {"a": p.a, "b": p.b, "cosine": round(c, 4)}
            for p, c in zip(pairs, cosines, strict=True)
            if p.kind == "seed"
        ],
        "bootstrap_5_50_95": bootstrap(labels, cosines, SWEEP_THRESHOLDS, at, beta=beta),
        "errors_at_chosen": sorted(errors, key=lambda e: -e["cosine"]),
    }


def render_markdown(result: dict[str, Any]) -> str:
    chosen = result["chosen"]
    shown = set(SHOWN_THRESHOLDS) | {chosen["threshold"], result["default_threshold"]}
    lines = [
        f"# Dedup threshold sweep ({result['n_pairs']} pairs, {result['n_positive']} positive)",
        "",
        f"Chosen threshold (best F{result['beta']:g}): **{chosen['threshold']:.2f}**, "
        f"precision {chosen['precision']:.3f}, recall {chosen['recall']:.3f}, "
        f"F0.5 {chosen['f05']:.3f}.",
        "",
        _bootstrap_line(result["bootstrap_5_50_95"]),
        "",
        "| threshold | precision | recall | F1 | F0.5 | tp | fp | fn | tn |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["sweep"]:
        if s["threshold"] in shown:
            mark = " (chosen)" if s["threshold"] == chosen["threshold"] else ""
            lines.append(
                f"| {s['threshold']:.2f}{mark} | {s['precision']:.3f} | {s['recall']:.3f} "
                f"| {s['f1']:.3f} | {s['f05']:.3f} | {s['tp']} | {s['fp']} | {s['fn']} "
                f"| {s['tn']} |"
            )
    lines += ["", f"## By kind at {chosen['threshold']:.2f}", ""]
    lines += [
        "Each kind holds one label, so a kind has a recall (positive kinds) or a false-merge",
        "rate (negative kinds), and precision is the overall one above.",
        "",
        "| kind | pairs | merged | recall | false-merge rate |",
        "|---" * 5 + "|",
    ]
    for kind, s in result["per_kind"].items():
        rate = f"{s['merge_rate']:.3f}"
        positive = s["tp"] + s["fn"] > 0
        recall, false_rate = (rate, "—") if positive else ("—", rate)
        lines.append(f"| {kind} | {s['n']} | {s['merged']} | {recall} | {false_rate} |")
    lines += ["", f"## By domain at {chosen['threshold']:.2f}", ""]
    lines += ["| domain | pairs | precision | recall | F0.5 |", "|---|---|---|---|---|"]
    for domain, s in result["per_domain"].items():
        lines.append(
            f"| {domain} | {s['n']} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f05']:.3f} |"
        )
    lines += [
        "",
        "## The seed pairs of the brief (docs/brief.md)",
        "",
        "| a | b | cosine |",
        "|---|---|---|",
    ]
    lines += [f"| {s['a']} | {s['b']} | {s['cosine']:.3f} |" for s in result["seeds"]]
    lines += ["", f"## Misclassified at {chosen['threshold']:.2f}", ""]
    lines += ["| cosine | label | kind | a | b |", "|---|---|---|---|---|"]
    for e in result["errors_at_chosen"]:
        lines.append(f"| {e['cosine']:.3f} | {e['label']} | {e['kind']} | {e['a']} | {e['b']} |")
    return "\n".join(lines) + "\n"


def _bootstrap_line(boot: dict[str, list[float]]) -> str:
    def span(key: str) -> str:
        low, _, high = boot[key]
        return f"{low:.2f}–{high:.2f}"

    return (
        f"Bootstrap over pairs ({BOOTSTRAP_RESAMPLES} resamples, seed 0, 5th–95th percentile): "
        f"chosen threshold "
        f"{span('chosen_threshold')}; at the chosen threshold precision {span('precision')}, "
        f"recall {span('recall')}."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.dedup", description=__doc__)
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--out", type=Path, default=Path("out/dedup"))
    parser.add_argument("--beta", type=float, default=0.5)
    args = parser.parse_args(argv)

    pairs = load_pairs(args.pairs)
    result = {"pairs": str(args.pairs), **evaluate(pairs, pair_cosines(pairs), args.beta)}
    report = render_markdown(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dedup.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    (args.out / "dedup.md").write_text(report, encoding="utf-8")
    print(report)
    print(f"Chosen dedup threshold: {result['chosen']['threshold']:.2f}")
    print(f"Wrote {args.out / 'dedup.json'} and {args.out / 'dedup.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
