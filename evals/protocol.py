"""The learning benchmark's protocol: folds, played and probe questions, paraphrases.

A corpus's eval set marks each question ``train`` (a question users ask again: the
benchmark plays it, recall and reward, every epoch) or ``heldout`` (a new question: never
played, only ranked). ``paraphrases.jsonl`` beside it holds hand-written rewordings of
training questions, each naming the question it rewords in ``metadata.paraphrase_of``.

Every question is also put in one of two folds, ``validation`` or ``test``, by a seeded
hash of its id, separately for training and held-out questions so each fold gets its
share of both (:func:`assign_folds`). A paraphrase belongs to the fold of its original.
A fold is a self-contained experiment: its training questions are played, its
paraphrases and held-out questions are ranked after training. Constants are tuned on
``validation``; results are reported on ``test``. ``all`` runs every question (the
benchmark before the folds existed).

Why folds rather than one shared set of played questions: a paraphrase probe only
measures transfer if its original was played, so if both folds played the same
questions, the paraphrases used for tuning would test what the reported ones test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.evalset import EvalQuery, EvalSet, load_eval_set, row_id
from packs.errors import InvalidInput

FOLDS = ("validation", "test")
SPLIT_CHOICES = (*FOLDS, "all")
PARAPHRASES_FILE = "paraphrases.jsonl"
DEFAULT_VALIDATION_SHARE = (
    0.5  # issue 29: even folds, >= 300 scored questions each (data/evals/README.md)
)
DEFAULT_SPLIT_SEED = 0


@dataclass(frozen=True)
class BenchQuery:
    id: str
    query: str
    relevant: frozenset[str]  # row ids


@dataclass(frozen=True)
class Protocol:
    """The questions of one fold: played, and the two kinds of probe."""

    split: str
    train: tuple[BenchQuery, ...]  # played every epoch
    paraphrases: tuple[BenchQuery, ...]  # rewordings of ``train``, never played
    heldout: tuple[BenchQuery, ...]  # new questions, never played

    def sizes(self) -> dict[str, int]:
        return {
            "train": len(self.train),
            "paraphrases": len(self.paraphrases),
            "heldout": len(self.heldout),
        }


def _rank_key(seed: int, query_id: str) -> str:
    return hashlib.sha256(f"{seed}:{query_id}".encode()).hexdigest()


def assign_folds(
    ids: Iterable[str],
    *,
    seed: int = DEFAULT_SPLIT_SEED,
    validation_share: float = DEFAULT_VALIDATION_SHARE,
) -> dict[str, str]:
    """Fold of each id: the ``round(share * n)`` ids first by sha256(``seed:id``) go to
    ``validation``, the rest to ``test``. Independent of the order ids come in."""
    if not 0.0 < validation_share < 1.0:
        raise InvalidInput(f"validation_share must be in (0, 1), got {validation_share!r}.")
    ranked = sorted(set(ids), key=lambda i: _rank_key(seed, i))
    cut = round(validation_share * len(ranked))
    return {i: (FOLDS[0] if n < cut else FOLDS[1]) for n, i in enumerate(ranked)}


def query_folds(
    eval_set: EvalSet, *, seed: int = DEFAULT_SPLIT_SEED, share: float = DEFAULT_VALIDATION_SHARE
) -> dict[str, str]:
    """Folds of every question, stratified by role (training and held-out separately)."""
    folds: dict[str, str] = {}
    for role in ("train", "heldout"):
        ids = [q.id for q in eval_set.queries if _role(q) == role]
        folds.update(assign_folds(ids, seed=seed, validation_share=share))
    return folds


def _role(query: EvalQuery) -> str:
    return "heldout" if query.split == "heldout" else "train"


def _bench_query(q: EvalQuery) -> BenchQuery:
    return BenchQuery(q.id, q.query, frozenset(row_id(r) for r in q.relevant))


def paraphrase_originals(eval_set: EvalSet, paraphrases: EvalSet) -> dict[str, str]:
    """Paraphrase id -> the id of the training question it rewords; refuses a paraphrase
    of an unknown or held-out question, or one whose relevant ids differ from it."""
    by_id = {q.id: q for q in eval_set.queries}
    originals: dict[str, str] = {}
    problems = []
    for p in paraphrases.queries:
        original = by_id.get(str(p.metadata.get("paraphrase_of", "")))
        if original is None:
            problems.append(f"line {p.line} ({p.id}): paraphrase_of names no question")
        elif _role(original) != "train":
            problems.append(f"line {p.line} ({p.id}): rewords held-out {original.id!r}")
        elif set(p.relevant) != set(original.relevant):
            problems.append(f"line {p.line} ({p.id}): relevant ids differ from {original.id!r}")
        else:
            originals[p.id] = original.id
    if problems:
        raise InvalidInput(
            f"{paraphrases.path}: {len(problems)} paraphrase(s) do not match "
            f"{eval_set.path}:\n  "
            + "\n  ".join(problems[:20])
            + "\nEach paraphrase needs metadata.paraphrase_of naming a training question, "
            "and that question's relevant ids."
        )
    return originals


def build_protocol(
    eval_set: EvalSet,
    paraphrases: EvalSet | None,
    split: str,
    *,
    seed: int = DEFAULT_SPLIT_SEED,
    share: float = DEFAULT_VALIDATION_SHARE,
) -> Protocol:
    """The questions of fold ``split`` (or of every fold with ``all``)."""
    if split not in SPLIT_CHOICES:
        raise InvalidInput(f"split must be one of {SPLIT_CHOICES}, got {split!r}.")
    folds = query_folds(eval_set, seed=seed, share=share)

    def chosen(query_id: str) -> bool:
        return split == "all" or folds[query_id] == split

    train = tuple(_bench_query(q) for q in eval_set.queries if _role(q) == "train" and chosen(q.id))
    heldout = tuple(
        _bench_query(q) for q in eval_set.queries if _role(q) == "heldout" and chosen(q.id)
    )
    probes: tuple[BenchQuery, ...] = ()
    if paraphrases is not None:
        originals = paraphrase_originals(eval_set, paraphrases)
        probes = tuple(_bench_query(p) for p in paraphrases.queries if chosen(originals[p.id]))
    if not train:
        raise InvalidInput(
            f"{eval_set.path}: fold {split!r} has no training questions; check the 'split' "
            "fields, or use a larger eval set."
        )
    return Protocol(split, train, probes, heldout)


def load_paraphrases(path: Path | None) -> EvalSet | None:
    """The paraphrase set at ``path``; ``None`` when there is none (no probe then)."""
    return load_eval_set(path) if path is not None and path.is_file() else None


@dataclass(frozen=True)
class CosineStats:
    count: int
    median: float
    p10: float
    share_at_least_08: float
    mean: float


def cosine_stats(cosines: Sequence[float]) -> CosineStats:
    """Median, 10th percentile, mean and the share >= 0.8 of paraphrase cosines."""
    import numpy as np

    values = np.asarray(cosines, dtype=np.float64)
    return CosineStats(
        count=int(values.size),
        median=float(np.median(values)),
        p10=float(np.percentile(values, 10)),
        share_at_least_08=float(np.mean(values >= 0.8)),
        mean=float(values.mean()),
    )


def paraphrase_cosines(
    eval_set: EvalSet, paraphrases: EvalSet, embed: Mapping[str, Sequence[float]] | None = None
) -> list[float]:
    """Cosine between each paraphrase and its original, with the default embedder."""
    import numpy as np

    from packs.embeddings import default_embedder

    originals = paraphrase_originals(eval_set, paraphrases)
    by_id = {q.id: q.query for q in eval_set.queries}
    pairs = [(p.query, by_id[originals[p.id]]) for p in paraphrases.queries]
    if embed is None:
        texts = sorted({t for pair in pairs for t in pair})
        vectors = default_embedder().embed(texts)
        embed = dict(zip(texts, vectors, strict=True))
    out = []
    for a, b in pairs:
        va, vb = np.asarray(embed[a], np.float64), np.asarray(embed[b], np.float64)
        out.append(float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb))))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.protocol DIR...``: split sizes and paraphrase cosines per corpus."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m evals.protocol", description=main.__doc__)
    parser.add_argument("corpus", type=Path, nargs="+")
    args = parser.parse_args(argv)
    for corpus in args.corpus:
        eval_set = load_eval_set(corpus / "queries.jsonl")
        paraphrases = load_paraphrases(corpus / PARAPHRASES_FILE)
        for split in SPLIT_CHOICES:
            print(corpus.name, split, build_protocol(eval_set, paraphrases, split).sizes())
        if paraphrases is not None:
            stats = cosine_stats(paraphrase_cosines(eval_set, paraphrases))
            print(
                f"{corpus.name}: {stats.count} paraphrases, cosine to the original: median "
                f"{stats.median:.3f}, mean {stats.mean:.3f}, 10th percentile {stats.p10:.3f}, "
                f"{100 * stats.share_at_least_08:.0f}% >= 0.8"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
