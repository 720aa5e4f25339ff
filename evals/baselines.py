"""The simple retrieval baselines a user could pick instead of Wolfie, built straight on
the libraries: BM25 (``bm25s`` with PyStemmer's English stemmer and English stop words),
an exact numpy cosine scan of the same vectors, and the two fused by reciprocal rank
(Cormack, Clarke and Büttcher 2009, k=60, over each side's top 100). No Wolfie ranking
code runs here; the rows and their vectors are read from the benchmark's base Pack.

Each baseline's success is the share of questions with a relevant row in its top ``k``,
the same measure as ``evals.learning.success``. They do not learn, so one figure per
probe set serves every seed and feedback model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import bm25s
import numpy as np
import Stemmer

from evals.protocol import BenchQuery
from packs.embeddings import EmbeddingProvider
from packs.pack import Pack
from packs.store import schemas

BASELINES = ("bm25", "cosine", "bm25+cosine")
RRF_K = 60
DEPTH = 100  # each list's depth before fusion


class Baselines:
    """BM25, cosine and their fusion over one Pack's rows."""

    def __init__(self, pack: Pack, embedder: EmbeddingProvider) -> None:
        columns = [*schemas.TEXT_COLUMNS, "id", "intent_embedding"]
        rows = pack.query("items", columns=columns).to_dict(as_series=False)
        self.ids: list[str] = rows["id"]
        texts = [
            "\n".join(rows[c][i] for c in schemas.TEXT_COLUMNS if rows[c][i])
            for i in range(len(self.ids))
        ]
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25 = bm25s.BM25()
        self._bm25.index(self._tokens(texts), show_progress=False)
        matrix = np.asarray(rows["intent_embedding"], dtype=np.float32)
        self._matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        self._embedder = embedder

    def _tokens(self, texts: Sequence[str]) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenize(
            list(texts), stopwords="en", stemmer=self._stemmer, show_progress=False
        )

    def rankings(self, query: str) -> dict[str, list[int]]:
        """Row indices, best first, of every baseline for ``query``."""
        depth = min(DEPTH, len(self.ids))
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )[0]
        ids = self._bm25.get_tokens_ids(list(tokens))
        lexical = self._bm25.get_scores_from_ids(ids) if ids else np.zeros(len(self.ids))
        found = np.flatnonzero(lexical > 0)
        bm25 = found[np.argsort(-lexical[found], kind="stable")][:depth].tolist()
        vector = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        vector /= max(float(np.linalg.norm(vector)), 1e-12)
        cosine = np.argsort(-(self._matrix @ vector), kind="stable")[:depth].tolist()
        fused: dict[int, float] = {}
        for ranking in (bm25, cosine):
            for rank, row in enumerate(ranking):
                fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + rank + 1)
        both = sorted(fused, key=lambda row: (-fused[row], row))
        return {"bm25": bm25, "cosine": cosine, "bm25+cosine": both}

    def success(self, queries: Sequence[BenchQuery], k: int) -> dict[str, float]:
        """Per baseline: the share of ``queries`` with a relevant row in its top ``k``."""
        if not queries:
            return {name: float("nan") for name in BASELINES}
        hits = dict.fromkeys(BASELINES, 0)
        for q in queries:
            for name, ranking in self.rankings(q.query).items():
                hits[name] += bool({self.ids[r] for r in ranking[:k]} & q.relevant)
        return {name: hits[name] / len(queries) for name in BASELINES}


def baseline_rates(
    pack: Pack, embedder: EmbeddingProvider, probes: Mapping[str, Sequence[BenchQuery]], k: int
) -> dict[str, dict[str, float]]:
    """Baseline -> probe set (train, paraphrases, heldout) -> success at ``k``."""
    baselines = Baselines(pack, embedder)
    rates = {name: baselines.success(queries, k) for name, queries in probes.items()}
    return {b: {probe: rates[probe][b] for probe in probes} for b in BASELINES}
