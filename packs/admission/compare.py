"""Is a new response the same fact as a stored one, or a correction of it? Pure.

``remember`` meets a stored memory of the same situation (intent cosine at least
``dedup_threshold``) and must tell a *repeat* (merge it) from a *correction* (a new
fact that supersedes the old one, issue 30). The embedding alone can't: "The staging
database host is db-old.internal" is at cosine 0.903 to its repeat "Staging DB host:
db-old.internal" and at 0.885 to its correction "... moved to db-new.internal"
(all-MiniLM-L6-v2). What changes in a correction is a value, a negation or an order,
so four checks decide, each measured on ``packs/data/corrections/response_pairs.jsonl``
(``python -m evals.corrections``, docs/corrections.md):

- **values**: the new response names a value the old one did not: a token with a digit,
  with inner punctuation (a host, a path, a version), or a capitalised name inside a
  sentence, that the old response does not hold anywhere (an acronym of its words, "DB"
  for "database" or "PR" for "pull request", it holds). Dropping a value is not a
  change: a shorter repeat merges;
- **negation**: one response negates ("not", "never", "no longer", ...) and the other
  does not;
- **order**: both describe a sequence ("then", "finally", "in order", ...) and the steps
  they share come in another order;
- **meaning**: the cosine of the two responses is below the threshold (a different
  action in other words), unless the new one is a shorter repeat: it adds at most one
  content word, at a cosine of 0.70 or more (issue 42).

Words are compared as BM25 reads them (:func:`packs.recall.lexical.stems`: bm25s' English
stop words and PyStemmer's Snowball stems, the tokeniser of BM25's index).

A repeat passes all four. The decision never reads the intent: the situation already
matched.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packs.recall.lexical import stems

# A word, keeping inner punctuation (db-old.internal, s3://a/b, 14.2, don't) and the sign
# of a number (+2R, -1.4R).
_TOKEN = re.compile(r"(?:[+\-]\d|[\w'’&])[\w'’.\-/:@+#&]*")
_EDGE = ".:/'’"
# Inner punctuation that marks a value (a host, a path, a version, P&L); a hyphen alone
# does not ("low-conviction", "force-push" are words).
_INNER = re.compile(r"[._/:@&]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Number words are values, spelled as digits so "three" repeats "3" (hand-set list).
_NUMBER_WORDS = """zero one two three four five six seven eight nine ten eleven twelve
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
_NUMBERS = {word: str(n) for n, word in enumerate(_NUMBER_WORDS.split())} | {
    "half": "1/2",
    "quarter": "1/4",
    "twice": "x2",
    "double": "x2",
    "triple": "x3",
}
_PRONOUNS = _words("I I'm I've I'd I'll I’m I’ve")
_SENTENCE_END = (".", "!", "?", ":", ";")
# "no longer" counts through "no".
_NEGATIONS = _words("""not no never none nothing nobody neither nor cannot without avoid
    n't don't doesn't didn't isn't aren't wasn't weren't won't can't couldn't shouldn't
    mustn't wouldn't hasn't haven't hadn't""")
# Words that make a response a sequence of steps (hand-set). "before" and "after" are
# left out: "A before B" and "B after A" name one order in opposite surface orders; so
# are the ordinals ("first", "third", "next"), which name a day or a module as often as
# a step (dev split: "Write dates as 2026-11-05, year first" reordered is a repeat).
_SEQUENCE = _words("then finally followed order step steps")


# A shorter repeat (fitted on the dev split of packs/data/corrections/response_pairs.jsonl,
# python -m evals.corrections; issue 42): at most one content word added, at a response
# cosine of 0.70 or more. Dev at the 0.88 threshold: repeats superseding 12 -> 8 of 93,
# corrections merged 4 -> 5 of 93 (two added words: 5 and 8).
SHORTER_ADDED = 1
SHORTER_COSINE = 0.70


@dataclass(frozen=True)
class Comparison:
    """Why two responses of one situation are (or are not) the same fact."""

    cosine: float
    new_values: tuple[str, ...]  # values the new response names and the old one lacks
    negation_flip: bool
    order_flip: bool
    # content words of the old response (not values) that the new one lacks: what it
    # was about, when the new one is about something else (admission control's band)
    dropped: tuple[str, ...] = ()
    # how many content words (BM25's stems) the new response has that the old one
    # lacks: none or one, it says the same thing shorter or dropping words (issue 42)
    added_words: int = 0

    @property
    def adds_nothing(self) -> bool:
        """A shorter repeat: at most :data:`SHORTER_ADDED` new content words, at cosine
        :data:`SHORTER_COSINE` or more (issue 42: "Wait for a pullback before entering",
        then "Wait for a pullback", at 0.79)."""
        return self.added_words <= SHORTER_ADDED and self.cosine >= SHORTER_COSINE

    def same_fact(self, threshold: float) -> bool:
        """A repeat: no new value, no negation or order flip, and cosine >= ``threshold``
        or a shorter repeat (:attr:`adds_nothing`)."""
        return (
            not self.new_values
            and not self.negation_flip
            and not self.order_flip
            and (self.cosine >= threshold or self.adds_nothing)
        )

    def reason(self, threshold: float) -> str:
        """What makes it a new fact, in words (empty for a repeat)."""
        parts = []
        if self.new_values:
            parts.append(f"new value {', '.join(self.new_values[:3])}")
        if self.negation_flip:
            parts.append("negation flipped")
        if self.order_flip:
            parts.append("steps reordered")
        if self.cosine < threshold:
            parts.append(f"cosine {self.cosine:.2f} < {threshold:.2f}")
        return "; ".join(parts)


def compare_responses(old: str, new: str, cosine: float) -> Comparison:
    """Compare ``new`` with ``old`` (``cosine``: of their response embeddings)."""
    old_tokens, new_tokens = tokens(old), tokens(new)
    # a value is new when the old text lacks it anywhere, as a value or as a word: a name
    # that opened the old sentence ("Terraform state lives in ...") is not new later on
    known = {t.casefold() for t in values(old_tokens)} | {t.casefold() for t in old_tokens}
    added = tuple(
        dict.fromkeys(
            t
            for t in values(new_tokens)
            if t.casefold() not in known and not abbreviates(t, old_tokens)
        )
    )
    old_stems, new_stems = stems(old), stems(new)
    return Comparison(
        cosine=cosine,
        new_values=added,
        negation_flip=negates(old_tokens) != negates(new_tokens),
        order_flip=reordered(old_tokens, new_tokens),
        dropped=dropped_words(old_tokens, new_stems),
        added_words=len(set(new_stems) - set(old_stems)),
    )


def abbreviates(value: str, old: list[str]) -> bool:
    """``value`` abbreviates words the old text holds, so it names no new value (issue
    42, dev split: "DB" for "database", "PR" for "pull request"): an all-capital word
    that is the initials of consecutive old words, or a contraction of one old word (its
    first letter, then some of its later letters in order). One capital letter is not an
    abbreviation: "plan A" to "plan B" changes a value."""
    if not (value.isalpha() and value.isupper() and len(value) > 1):
        return False
    short = value.casefold()
    words = [w.casefold() for w in old if w not in {".", ","}]
    for i in range(len(words) - len(short) + 1):
        if "".join(w[0] for w in words[i : i + len(short)]) == short:
            return True
    return any(
        len(w) > len(short) and w[0] == short[0] and _in_order(short[1:], w[1:]) for w in words
    )


def _in_order(letters: str, word: str) -> bool:
    rest = iter(word)
    return all(c in rest for c in letters)


def dropped_words(old: list[str], new_stems: list[str]) -> tuple[str, ...]:
    """The old text's content words (neither values nor stop words) whose stem the new
    one lacks."""
    kept = set(new_stems)
    found = {w.casefold() for w in values(old)}
    return tuple(
        dict.fromkeys(
            w.casefold()
            for w in old
            if w not in {".", ","}
            and w.casefold() not in _NEGATIONS | found
            and (stemmed := stems(w))
            and not set(stemmed) <= kept
            and not any(c.isdigit() for c in w)
        )
    )


def tokens(text: str) -> list[str]:
    """Words with their inner punctuation; marks at the edges are dropped, and a token
    that ended a sentence (or a clause) is followed by a ``"."`` (``","``) marker."""
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        raw = match.group()
        word = raw.strip(_EDGE)
        if word:
            out.append(word)
        following = text[match.end() : match.end() + 1]
        if raw.endswith(_SENTENCE_END) or following in _SENTENCE_END:
            out.append(".")
        elif following == ",":
            out.append(",")
    return out


def values(words: list[str]) -> list[str]:
    """The tokens that name a value, as compared: a number (digits or a number word, as
    digits), a token with inner punctuation, or a capital inside a sentence (a name, a
    product, an acronym; not "I")."""
    found = []
    start = True
    for word in words:
        if word in {".", ","}:
            start = start or word == "."
            continue
        folded = word.casefold()
        if folded in _NUMBERS:
            found.append(_NUMBERS[folded])
        elif _names_a_value(word, start):
            found.append(word)
        start = False
    return found


def _names_a_value(word: str, start: bool) -> bool:
    if any(c.isdigit() for c in word) or _INNER.search(word.strip("'’")):
        return True
    return not start and word[:1].isupper() and word not in _PRONOUNS


def negates(words: list[str]) -> bool:
    return any(w.casefold().replace("’", "'") in _NEGATIONS for w in words)


def reordered(old: list[str], new: list[str]) -> bool:
    """Both responses are sequences of steps (split at sequence words, commas and
    sentence ends) and two content words they share swap steps: one comes before the
    other in the old response's steps and after it in the new one's."""
    old_steps, new_steps = _steps(old), _steps(new)
    if old_steps is None or new_steps is None:
        return False
    shared = set(old_steps) & set(new_steps)
    return any(
        old_steps[a] < old_steps[b] and new_steps[a] > new_steps[b] for a in shared for b in shared
    )


def _steps(words: list[str]) -> dict[str, int] | None:
    """Each content word's first step, or None when the text names no sequence."""
    folded = [w.casefold() for w in words]
    if not _SEQUENCE & set(folded):
        return None
    step, first = 0, dict[str, int]()
    for word in folded:
        if word in _SEQUENCE or word in {".", ","}:
            step += 1
        else:
            for stem in stems(word):  # stop words have none
                first.setdefault(stem, step)
    return first


@dataclass(frozen=True)
class Judgement:
    """A stored memory of the same situation against a new one: a repeat (merge) or a
    new fact (supersede), with the reason in words. (Called ``Verdict`` before issue 43:
    a verdict is an output check's pass or fail, docs/architecture.md's glossary.)"""

    repeat: bool
    reason: str


def judge(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    response_cosine: float,
    outcome_cosine: float | None,
    threshold: float,
) -> Judgement:
    """Is ``new`` a repeat of ``old`` (rows with ``response_summary``, ``outcome`` and
    ``signal_polarity``)? A polarity both label and differ on, a response or an outcome
    (when both have one; ``outcome_cosine`` of their embeddings) that is not the same fact
    makes it a new fact. An unlabelled polarity or a missing outcome says nothing."""
    reasons = []
    before, after = old.get("signal_polarity"), new.get("signal_polarity")
    if before and after and before != after:
        reasons.append(f"polarity {before} -> {after}")
    response = compare_responses(
        old.get("response_summary") or "", new.get("response_summary") or "", response_cosine
    )
    if not response.same_fact(threshold):
        reasons.append(f"response: {response.reason(threshold)}")
    if old.get("outcome") and new.get("outcome") and outcome_cosine is not None:
        outcome = compare_responses(old["outcome"], new["outcome"], outcome_cosine)
        if not outcome.same_fact(threshold):
            reasons.append(f"outcome: {outcome.reason(threshold)}")
    return Judgement(not reasons, "; ".join(reasons))


def __getattr__(name: str) -> Any:
    if name == "Verdict":  # deprecated for one release (issue 43)
        warnings.warn(
            "packs.admission.compare.Verdict is deprecated; use Judgement",
            DeprecationWarning,
            stacklevel=2,
        )
        return Judgement
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
