"""Phase A's lexical side: BM25 over each row's retrievable text, in process.

The words of a row are what a user would search it by: a knowledge chunk's text and
title, a memory's intent, response and lesson (:func:`row_text`). They are tokenised by
``bm25s`` with PyStemmer's English (Snowball) stemmer and bm25s' English stop words, and
scored by ``bm25s`` (Lucene's BM25 variant, k1=1.5, b=0.75: the library's defaults, the
values of Robertson and Zaragoza 2009).

A bm25s index is built once over a fixed corpus, so :class:`LexicalIndex` keeps two:

- the **main** index over the rows known when it was last built, and
- a **tail** over the rows whose text arrived since, scored by bm25s' own scorer with the
  document frequencies and average length of main and tail together, so a new row ranks
  as it would in a rebuilt index (up to the main rows' slightly older statistics).

The main index is rebuilt when the tail passes :data:`TAIL_SHARE` of it (or always, for a
small Pack): a rebuild costs about 2 s per 100k rows on the shared 2-core box
(``benchmarks/recall_bench.py``). Rows are keyed by id and text, so a row rewritten with
the same text (every utility update rewrites a Lance row) costs nothing here.

bm25s (and scipy under it) load on first use, from :mod:`packs.recall.bm25`, so
``from packs import Pack`` pays none of them (issue 45).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from packs.store.schemas import TEXT_COLUMNS

# Hand-set: below this many rows a full rebuild is cheap enough to beat keeping a tail.
REBUILD_ROWS = 10_000
TAIL_SHARE = 0.1  # hand-set: rebuild once the tail holds a tenth of the main index's rows


def row_text(columns: Mapping[str, Sequence[Any]], i: int) -> str:
    """The text a row is found by: its non-empty text columns, joined."""
    parts = (columns[c][i] for c in TEXT_COLUMNS if c in columns)
    return "\n".join(p for p in parts if p)


_WORD = re.compile(r"[A-Za-z][\w'-]*|[.?!]")


def names(text: str) -> set[str]:
    """The names a text mentions, lower-cased: capitalised words that do not open a
    sentence ("Melanie", "Lisbon", "JSON"), "I" aside. A crude proper-noun test, enough to
    tell "the doctor told Melanie" from "the doctor told Grace"."""
    found: set[str] = set()
    opening = True
    for word in _WORD.findall(text):
        if word in ".?!":
            opening = True
            continue
        if not opening and word[0].isupper() and word != "I":
            found.add(word.lower())
        opening = False
    return found


def mentions(text: str, wanted: set[str]) -> bool:
    """Whether ``text`` has any of the words ``wanted`` (lower-cased), as whole words."""
    words = {w.lower() for w in _WORD.findall(text)}
    return not wanted.isdisjoint(words)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop words out, stemmed (bm25s' tokenizer with PyStemmer)."""
    if not texts:
        return []
    from packs.recall import bm25  # bm25s and scipy load on a recall's first words

    return bm25.tokenize(texts)


def stems(text: str) -> list[str]:
    """One text's words as BM25 reads them (:func:`tokenize`): lower-cased, bm25s'
    English stop words out, PyStemmer's Snowball stems, so "approves" and "approved" are
    one word and "is", "the" none. The one tokeniser of the engine's word checks too
    (admission's content words, the repeat-or-correction comparison)."""
    return tokenize([text])[0]


@dataclass(frozen=True)
class LexicalHits:
    """BM25 hits: row ids best first, with their scores (all > 0)."""

    ids: list[str]
    scores: NDArray[np.float64]


class LexicalIndex:
    """BM25 over rows keyed by id (see the module docstring). Not thread-safe: the Pack
    calls it under its lock, through :class:`~packs.recall.vector_cache.VectorCache`."""

    def __init__(self, rebuild_rows: int = REBUILD_ROWS, tail_share: float = TAIL_SHARE) -> None:
        self.rebuild_rows = rebuild_rows
        self.tail_share = tail_share
        self.builds = 0  # main-index builds, for tests and the benchmark
        self.clear()

    def clear(self) -> None:
        self._vocab: dict[str, int] = {}
        self._docs: list[NDArray[np.int32]] = []  # token ids of every document
        self._doc_ids: list[str] = []
        self._alive: list[bool] = []
        self._dead: NDArray[np.bool_] | None = None  # ~_alive as an array, made on demand
        self._doc_of: dict[str, int] = {}  # id -> its live document
        self._digest: dict[str, int] = {}  # id -> hash of the text indexed
        self._main: Any = None  # a bm25s.BM25
        self._main_docs = 0  # documents [0, main_docs) are in the main index
        self._main_vocab = 0
        self._tail: Any = None  # a bm25.TailScorer
        self._tail_stale = False

    @property
    def rows(self) -> int:
        return len(self._doc_of)

    def upsert(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index each row's text; a row whose text is unchanged is left as it is."""
        changed = [
            (i, t) for i, t in zip(ids, texts, strict=True) if self._digest.get(i) != hash(t)
        ]
        if not changed:
            return
        self.remove(i for i, _ in changed)
        for (memory_id, text), tokens in zip(
            changed, tokenize([t for _, t in changed]), strict=True
        ):
            ids_of = [self._vocab.setdefault(token, len(self._vocab)) for token in tokens]
            self._doc_of[memory_id] = len(self._docs)
            self._digest[memory_id] = hash(text)
            self._docs.append(np.asarray(ids_of, dtype=np.int32))
            self._doc_ids.append(memory_id)
            self._alive.append(True)
        self._tail_stale, self._dead = True, None

    def remove(self, ids: Iterable[str]) -> None:
        for memory_id in ids:
            doc = self._doc_of.pop(memory_id, None)
            if doc is not None:
                self._alive[doc] = False
                self._dead = None
                self._digest.pop(memory_id, None)

    def retain(self, keep: Container[str]) -> None:
        """Forget every row not in ``keep``."""
        self.remove([i for i in self._doc_of if i not in keep])

    def search(
        self, query: str, k: int, allowed: Callable[[str], bool] | None = None
    ) -> LexicalHits:
        """The ``k`` best rows by BM25 for ``query`` that ``allowed`` admits, best first;
        only rows sharing a word with the query (score > 0)."""
        self._refresh()
        scores = self._scores(query)
        found = np.flatnonzero(scores > 0)
        if not len(found) or k <= 0:
            return LexicalHits([], np.zeros(0))
        # Best first; rows past the first 4k are sorted only when the filter is narrow.
        for n in dict.fromkeys((min(len(found), 4 * k), len(found))):
            order = self._best(found, scores, n)
            ids, kept = [], []
            for doc in order:
                memory_id = self._doc_ids[doc]
                if allowed is None or allowed(memory_id):
                    ids.append(memory_id)
                    kept.append(float(scores[doc]))
                    if len(ids) == k:
                        break
            if len(ids) == k or len(order) == len(found):
                break
        return LexicalHits(ids, np.asarray(kept, dtype=np.float64))

    @staticmethod
    def _best(found: NDArray[np.int64], scores: NDArray[np.float64], n: int) -> NDArray[np.int64]:
        """The ``n`` best of ``found`` by score, best first (ties by document order)."""
        if n < len(found):
            found = np.sort(found[np.argpartition(-scores[found], n - 1)[:n]])
        return found[np.argsort(-scores[found], kind="stable")]

    # --- building -------------------------------------------------------------------------

    def _refresh(self) -> None:
        if not self._tail_stale:
            return
        tail = len(self._docs) - self._main_docs
        if (
            self._main is None
            or len(self._docs) <= self.rebuild_rows
            or (tail > self.tail_share * self._main_docs)
        ):
            self._rebuild()
        else:
            self._build_tail()
        self._tail_stale = False

    def _rebuild(self) -> None:
        """One main index over the live documents (dead ones dropped, ids renumbered)."""
        live = [d for d in range(len(self._docs)) if self._alive[d]]
        self._docs = [self._docs[d] for d in live]
        self._doc_ids = [self._doc_ids[d] for d in live]
        self._alive, self._dead = [True] * len(live), None
        self._doc_of = {memory_id: n for n, memory_id in enumerate(self._doc_ids)}
        self._main, self._tail = None, None
        self._main_docs, self._main_vocab = len(live), len(self._vocab)
        self.builds += 1
        if live:
            from packs.recall import bm25

            main = bm25.bm25s.BM25()
            main.index(
                (_lists(self._docs), dict(self._vocab)),
                create_empty_token=False,
                show_progress=False,
            )
            self._main = main

    def _build_tail(self) -> None:
        docs = [d for d in range(len(self._docs)) if self._alive[d]]
        freqs: dict[int, int] = {}
        for d in docs:
            for token in set(self._docs[d].tolist()):
                freqs[token] = freqs.get(token, 0) + 1
        avg = float(np.mean([len(self._docs[d]) for d in docs])) if docs else 1.0
        from packs.recall import bm25

        tail = bm25.TailScorer(freqs, len(docs), max(avg, 1.0))
        tail.index(
            (_lists(self._docs[self._main_docs :]), dict(self._vocab)),
            create_empty_token=False,
            show_progress=False,
        )
        self._tail = tail

    def _scores(self, query: str) -> NDArray[np.float64]:
        """BM25 of every document (dead ones 0)."""
        scores = np.zeros(len(self._docs), dtype=np.float64)
        tokens = [self._vocab[t] for t in (tokenize([query]) or [[]])[0] if t in self._vocab]
        if not tokens:
            return scores
        if self._main is not None:
            main = [t for t in tokens if t < self._main_vocab]
            if main:
                scores[: self._main_docs] = self._main.get_scores_from_ids(main)
        if self._tail is not None and len(self._docs) > self._main_docs:
            scores[self._main_docs :] = self._tail.get_scores_from_ids(tokens)
        if self._dead is None:  # a 100k-entry list made an array on every search: 2-5 ms
            self._dead = ~np.asarray(self._alive, dtype=bool)
        scores[self._dead] = 0.0
        return scores


def _lists(docs: Sequence[NDArray[np.int32]]) -> list[list[int]]:
    return [d.tolist() for d in docs]
