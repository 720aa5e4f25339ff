"""How Phase B fuses Phase A's two lists: each fusion is a small object that owns its
parameters, as LanceDB's rerankers do (``RRFReranker(K=60)``).

``settings.ranking.lexical`` names one and :func:`fusion_for` builds it from the settings;
``"off"`` keeps BM25 out of Phase A, so there is nothing to fuse. Measurements that chose
the default (``zscore``): docs/recall.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, assert_never

import numpy as np
from numpy.typing import NDArray

from packs.recall.ranking import RankWeights, blended_relevance, fused_relevance
from packs.settings import RankingSettings

Floats = NDArray[np.floating]
Ints = NDArray[np.integer]


class Fusion(Protocol):
    def relevance(self, similarity: Floats, lexical: Floats, lexical_rank: Ints) -> Floats:
        """Relevance of each candidate from its cosine, its BM25 score (0 outside BM25's
        list) and its 0-based place in that list (-1 outside)."""
        ...


@dataclass(frozen=True)
class ZScoreBlend:
    """``z(sim) + lexical_weight · z(bm25)`` (the default), z-scored with the pool's
    floors and clip of ``weights``."""

    lexical_weight: float
    weights: RankWeights

    def relevance(self, similarity: Floats, lexical: Floats, lexical_rank: Ints) -> Floats:
        return blended_relevance(similarity, lexical, self.weights, self.lexical_weight)


@dataclass(frozen=True)
class ReciprocalRank:
    """Weighted reciprocal-rank fusion (Cormack, Clarke and Büttcher 2009, ``k`` = 60
    there and by default)."""

    k: int = 60
    lexical_weight: float = 1.0

    def relevance(self, similarity: Floats, lexical: Floats, lexical_rank: Ints) -> Floats:
        return fused_relevance(similarity, lexical_rank, self.k, self.lexical_weight)


def fusion_for(ranking: RankingSettings, weights: RankWeights) -> Fusion | None:
    """The fusion ``ranking.lexical`` names, with its parameters; None for ``"off"``."""
    match ranking.lexical:
        case "zscore":
            return ZScoreBlend(ranking.lexical_weight, weights)
        case "rrf":
            return ReciprocalRank(ranking.rrf_k, ranking.lexical_weight)
        case "off":
            return None
        case unknown:
            assert_never(unknown)
