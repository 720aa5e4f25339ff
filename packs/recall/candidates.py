"""Phase A's output, the pool Phase B ranks (``packs/recall/phases.py``) and the tuner
replays (``packs/tuning/replay.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Candidates:
    """Phase A output: column lists in similarity order, and the similarities.

    ``ranked_similarity`` is what Phase B blends: the similarity, or for a memory linked
    to this query by past rewards the better of it and its key similarity
    (:meth:`packs.learning.context.ContextIndex.linked`). ``similarity`` stays the
    memory's own, for display and the log.
    """

    columns: dict[str, list[Any]]
    similarity: np.ndarray
    ranked_similarity: np.ndarray | None = None
    # Hybrid Phase A (packs/recall/lexical.py): each candidate's place in the BM25 list
    # (-1: not in it) and its BM25 score (0 then). None: cosine only.
    lexical_rank: np.ndarray | None = None
    lexical: np.ndarray | None = None

    @property
    def ranking_similarity(self) -> np.ndarray:
        return self.similarity if self.ranked_similarity is None else self.ranked_similarity

    def __len__(self) -> int:
        return len(self.similarity)

    @property
    def ids(self) -> list[str]:
        return self.columns["id"]
