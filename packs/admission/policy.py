"""Admission control's decisions, as pure functions (issue 30, docs/admission.md).

With a Pack's ``admission.policy`` on, ``remember`` refuses, holds or stores a memory
(merging a repeat and superseding a correction as always, packs/corrections.py):

- **refuse, empty or boilerplate**: fewer than ``min_content_words`` content words in the
  intent and response together, once function words and chatter ("thanks", "ok",
  "sounds good") are left out;
- **refuse, redundant** (novelty below the floor): a current memory of an intent at
  least ``novelty_floor`` close already says the same fact (it counts as a repeat of it);
- **supersede a reworded correction**: an intent at least ``correction_band`` close,
  responses about the same thing (cosine >= ``correction_subject``, no content word of
  the old one dropped but its values) and a new value or a negation in the new one;
- **hold** (probation: stored, not recalled until a reward or a repeat confirms it): the
  caller's ``confidence`` is below ``hold_confidence``, or the track record of its
  nearest rewarded memories predicts a utility below ``hold_utility``;
- else **store**.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from packs.admission.compare import Comparison
from packs.recall.lexical import stems


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that BM25 keeps (bm25s' 33 English stop words are Lucene's) but that carry no fact
# in a chat: pronouns, auxiliaries and question words, and the acknowledgements,
# greetings and fillers of chat logs (hand-set; compared as their stems, so "thanks" is
# "thank"). "noted" and "works" left the list with the stems: "notes" and "worked" are
# content (packs/data/admission/stream.jsonl, packs/data/corrections/response_pairs.jsonl).
CHATTER = _words("""been it's its those here you your we our he she him her i i'm me my
    do does did done so than too very can could would should may might must has have had
    just also now yes yeah yep ok okay k sure fine thanks thank thx ty cheers please pls hi
    hello hey bye goodbye lol haha hmm um uh ah oh great cool nice awesome perfect good got
    sounds let know see check later soon again today tomorrow morning question answer
    something anything thing stuff what how why who when where which one all any some more
    much well right really maybe brb np sorry welcome go ahead quick from were""")


@cache
def _chatter_stems() -> frozenset[str]:
    return frozenset(stems(" ".join(sorted(CHATTER))))  # the stemmer loads on first use


@dataclass(frozen=True)
class Neighbour:
    """A stored memory near the new one, with its track record."""

    similarity: float
    utility: float
    reward_count: int


def content_words(text: str) -> list[str]:
    """The words of ``text`` as BM25 reads them (:func:`packs.recall.lexical.stems`: its
    stop words out, stemmed), less the :data:`CHATTER` stems."""
    chatter = _chatter_stems()
    return [w for w in stems(text) if w not in chatter]


def empty_reason(intent: str, response: str, min_words: int) -> str | None:
    """Why a memory is empty or boilerplate (None when it has enough content)."""
    found = len(content_words(intent)) + len(content_words(response))
    if found >= min_words:
        return None
    return (
        f"boilerplate: {found} content word{'s' * (found != 1)} in the intent and response "
        f"(the Pack's admission.min_content_words is {min_words})"
    )


def predicted_utility(neighbours: Sequence[Neighbour], min_evidence: int) -> float | None:
    """``sum(sim_i Q_i) / sum(sim_i)`` over the neighbours with at least one reward, when at
    least ``min_evidence`` of them have one (else None: too little to predict from).
    Similarities at or below 0 count for nothing."""
    rewarded = [n for n in neighbours if n.reward_count > 0 and n.similarity > 0]
    if len(rewarded) < min_evidence:
        return None
    weight = sum(n.similarity for n in rewarded)
    return sum(n.similarity * n.utility for n in rewarded) / weight


def hold_reason(
    confidence: float | None,
    predicted: float | None,
    hold_confidence: float,
    hold_utility: float,
) -> str | None:
    """Why a memory goes on probation (None: it is stored as usual)."""
    if confidence is not None and confidence < hold_confidence:
        return f"the caller's confidence {confidence:.2f} is below {hold_confidence:.2f}"
    if predicted is not None and predicted < hold_utility:
        return (
            f"its nearest rewarded memories predict a utility of {predicted:+.2f}, below "
            f"{hold_utility:+.2f}"
        )
    return None


def reworded_correction(
    comparison: Comparison,
    intent_similarity: float,
    band: float,
    subject: float,
    polarity_flip: bool = False,
) -> bool:
    """A correction in other words: a close intent, responses about the same thing (their
    cosine at least ``subject``, and the new one keeps every content word of the old one
    but its values), and a new value, a flipped negation or a flipped polarity in the new
    one. "The billing API runs on api-1" drops "database" from "The billing database runs
    on pg-1": another fact, not a correction."""
    changed = bool(comparison.new_values) or comparison.negation_flip or polarity_flip
    same_subject = comparison.cosine >= subject and not comparison.dropped
    return intent_similarity >= band and same_subject and changed
