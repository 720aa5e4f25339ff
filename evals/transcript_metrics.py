"""Word error rate of transcripts as a typed result (``jiwer``).

``WER = (S + D + I) / N`` over the whole corpus of references (substitutions, deletions
and insertions against N reference words), after the same normalisation on both sides:
lower case, punctuation removed, whitespace collapsed. Lower is better. Reference
transcripts are usually written with punctuation and capitals that a recogniser
doesn't reproduce the same way, and those differences are not recognition errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evals.metrics import MetricResult, RunContext
from packs.errors import InvalidInput


def _normaliser() -> Any:
    import jiwer

    return jiwer.Compose(
        [
            jiwer.ToLowerCase(),
            jiwer.RemovePunctuation(),
            jiwer.RemoveMultipleSpaces(),
            jiwer.Strip(),
            jiwer.ReduceToListOfListOfWords(),
        ]
    )


def word_error_rate(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Corpus WER of ``hypotheses`` against ``references`` (same length, same order)."""
    import jiwer

    if len(references) != len(hypotheses):
        raise InvalidInput(
            f"Got {len(references)} references but {len(hypotheses)} hypotheses; "
            "pass one hypothesis per reference, in the same order."
        )
    if not references:
        raise InvalidInput("word_error_rate needs at least one reference transcript.")
    empty = [i for i, ref in enumerate(references) if not ref.strip()]
    if empty:
        raise InvalidInput(f"References {empty} are empty; WER needs reference words.")
    transform = _normaliser()
    return float(
        jiwer.wer(
            list(references),
            list(hypotheses),
            reference_transform=transform,
            hypothesis_transform=transform,
        )
    )


def wer_result(
    references: Sequence[str], hypotheses: Sequence[str], context: RunContext
) -> MetricResult:
    """:func:`word_error_rate` as a :class:`MetricResult` (lower is better)."""
    value = word_error_rate(references, hypotheses)
    return context.result("wer", value, None, False, len(references))
