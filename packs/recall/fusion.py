"""How Phase B fuses Phase A's two lists, as strategy classes (as LanceDB's rerankers are).

``settings.ranking.lexical`` names one; :data:`FUSIONS` turns the name into the object that
does the work. Measurements that chose the default (``zscore``): docs/recall.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, get_args

import numpy as np
from numpy.typing import NDArray

from packs.recall.ranking import RankWeights, blended_relevance, fused_relevance
from packs.settings import LexicalMode, RankingSettings

Floats = NDArray[np.floating]
Ints = NDArray[np.integer]


class Fusion(ABC):
    """Relevance of each candidate from its cosine and its place in the BM25 list."""

    name: ClassVar[str]

    @abstractmethod
    def relevance(
        self,
        similarity: Floats,
        lexical: Floats,
        lexical_rank: Ints,
        weights: RankWeights,
        ranking: RankingSettings,
    ) -> Floats:
        """``lexical``: BM25 scores (0 outside its list); ``lexical_rank``: 0-based place
        in it (-1 outside)."""


class ZScoreBlend(Fusion):
    """``z(sim) + lexical_weight · z(bm25)`` (the default)."""

    name = "zscore"

    def relevance(
        self,
        similarity: Floats,
        lexical: Floats,
        lexical_rank: Ints,
        weights: RankWeights,
        ranking: RankingSettings,
    ) -> Floats:
        return blended_relevance(similarity, lexical, weights, ranking.lexical_weight)


class ReciprocalRank(Fusion):
    """Weighted reciprocal-rank fusion (Cormack, Clarke and Büttcher 2009), ``k = rrf_k``."""

    name = "rrf"

    def relevance(
        self,
        similarity: Floats,
        lexical: Floats,
        lexical_rank: Ints,
        weights: RankWeights,
        ranking: RankingSettings,
    ) -> Floats:
        return fused_relevance(similarity, lexical_rank, ranking.rrf_k, ranking.lexical_weight)


class CosineOnly(Fusion):
    """Cosine alone: BM25 stays out of Phase A."""

    name = "off"

    def relevance(
        self,
        similarity: Floats,
        lexical: Floats,
        lexical_rank: Ints,
        weights: RankWeights,
        ranking: RankingSettings,
    ) -> Floats:
        return similarity


FUSIONS: dict[str, Fusion] = {f.name: f for f in (ZScoreBlend(), ReciprocalRank(), CosineOnly())}
if set(FUSIONS) != set(get_args(LexicalMode)):  # pragma: no cover - caught at import
    raise ImportError("packs.settings.LexicalMode and recall.fusion.FUSIONS disagree.")
