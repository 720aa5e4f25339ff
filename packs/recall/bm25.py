"""bm25s and PyStemmer, loaded only when a recall first needs BM25 (issue 45): bm25s
imports scipy, and both at the top of :mod:`packs.recall.lexical` made every
``from packs import Pack`` pay for them. :mod:`packs.recall.lexical` imports this module
inside the functions that build or query an index."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import bm25s
import Stemmer
from bm25s import scoring

STEMMER = Stemmer.Stemmer("english")
# bm25s sets its own logger to DEBUG when imported, so every index build printed
# "DEBUG:bm25s:Building index from IDs" wherever logging has a handler (the MCP server's
# stderr, Prefect's logs). Its warnings still show.
logging.getLogger("bm25s").setLevel(logging.WARNING)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop words out, stemmed: bm25s' tokenizer with PyStemmer's English."""
    out = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=STEMMER, return_ids=False, show_progress=False
    )
    return [list(tokens) for tokens in out]


class TailScorer(bm25s.BM25):
    """A bm25s index whose IDF and average length come from a larger corpus (main plus
    tail), built by bm25s' own scoring functions (the override point bm25s documents)."""

    def __init__(self, doc_freqs: dict[int, int], n_docs: int, avg_len: float) -> None:
        super().__init__()
        self._df, self._n, self._avg = doc_freqs, n_docs, avg_len

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: list[list[int]],
        show_progress: bool = False,
        leave_progress: bool = False,
    ) -> dict[str, Any]:
        self.nonoccurrence_array = None
        local = scoring._calculate_doc_freqs(
            corpus_tokens=corpus_token_ids, unique_tokens=unique_token_ids, show_progress=False
        )
        idf = scoring._build_idf_array(
            doc_frequencies={t: self._df.get(t, 0) for t in unique_token_ids},
            n_docs=self._n,
            compute_idf_fn=scoring._select_idf_scorer(self.idf_method),
            dtype=self.dtype,
        )
        data, rows, cols = scoring._build_scores_and_indices_for_matrix(
            corpus_token_ids=corpus_token_ids,
            idf_array=idf,
            avg_doc_len=self._avg,
            doc_frequencies=local,
            k1=self.k1,
            b=self.b,
            delta=self.delta,
            nonoccurrence_array=None,
            method=self.method,
            dtype=self.dtype,
            int_dtype=self.int_dtype,
            show_progress=False,
        )
        data, indices, indptr = self._np_csc(
            data=data, rows=rows, cols=cols, shape=(len(corpus_token_ids), len(unique_token_ids))
        )
        return {
            "data": data.astype(self.dtype),
            "indices": indices,
            "indptr": indptr,
            "num_docs": len(corpus_token_ids),
        }
