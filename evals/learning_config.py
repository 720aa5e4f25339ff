"""What a learning-benchmark run is asked for, and what it returns.

Kept apart from ``evals/learning_bench.py`` (which runs) and ``evals/learning_report.py``
(which renders) so that neither has to import the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.feedback_models import FeedbackModel
from evals.learning import MethodRun
from evals.protocol import DEFAULT_SPLIT_SEED, DEFAULT_VALIDATION_SHARE, PARAPHRASES_FILE

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "data" / "evals" / "manpages"
BASELINE = "no-feedback"
DEFAULT_METHODS = ("similarity", "utility", "contextual", "default")
METRICS = ("train", "paraphrases", "heldout")


@dataclass(frozen=True)
class BenchConfig:
    corpus: Path = DEFAULT_CORPUS
    eval_set: Path | None = None  # default: <corpus>/queries.jsonl
    paraphrases: Path | None = None  # default: <corpus>/paraphrases.jsonl, if present
    out: Path = Path("out/learn-bench")
    cache: Path | None = None  # default: <out>/cache
    epochs: int = 5
    seeds: tuple[int, ...] = (0, 1, 2)
    methods: tuple[str, ...] = DEFAULT_METHODS  # the no-feedback baseline always runs too
    settings: Mapping[str, Any] = field(default_factory=dict)  # shared by every method
    split: str = "test"
    split_seed: int = DEFAULT_SPLIT_SEED
    validation_share: float = DEFAULT_VALIDATION_SHARE
    feedback: FeedbackModel = field(default_factory=FeedbackModel)

    @property
    def eval_set_path(self) -> Path:
        return self.eval_set or self.corpus / "queries.jsonl"

    @property
    def paraphrases_path(self) -> Path | None:
        if self.paraphrases is not None:
            return self.paraphrases
        default = self.corpus / PARAPHRASES_FILE
        return default if default.is_file() else None


@dataclass(frozen=True)
class BenchResult:
    runs: list[MethodRun]  # every method (and the baseline) in every seed
    settings: dict[str, dict[str, Any]]  # method -> Pack settings it ran with
    sizes: dict[str, int]  # train / paraphrases / heldout questions of the fold
    chunks: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    # library baselines that never learn (evals/baselines.py): name -> probe set -> rate
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(run.method for run in self.runs))

    def run(self, method: str, seed: int) -> MethodRun:
        for run in self.runs:
            if run.method == method and run.seed == seed:
                return run
        raise KeyError(f"No run of {method!r} in seed {seed}.")
