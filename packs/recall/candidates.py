"""Phase A's input, one question as it asks (:class:`RecallQuery`), and its output, the
pool Phase B ranks (``packs/recall/phases.py``) and the tuner replays
(``packs/tuning/replay.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np


@dataclass(frozen=True)
class RecallQuery:
    """One question as Phase A asks it, built once by the recall service and passed down.

    Cosine top-``k1`` over memories and knowledge, keeping similarity >= ``delta``; with
    ``lexical`` the BM25 top-``k1`` for ``text`` joins it (the union). ``text`` is the
    question's words, for BM25 and for the links' name check. ``links`` (memory id -> key
    similarity, associative links) count where a key would have put its memory among the
    ``k2`` best by similarity. With ``hops`` the chunks within that many positions of the
    ``k2`` best by cosine and by BM25 join the pool (adjacency links). ``clause`` binds
    every row; ``visible`` is its scope part; with ``now`` rows expired by then are left
    out too.
    """

    vector: np.ndarray
    k1: int
    delta: float
    clause: str | None = None
    k2: int = 0  # 0: k1
    text: str | None = None
    lexical: bool = False
    links: Mapping[str, float] = field(default_factory=dict)
    hops: int = 0
    now: datetime | None = None
    visible: str | None = None

    @property
    def top(self) -> int:
        """The ``k2`` links and neighbours compete for."""
        return self.k2 or self.k1


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
