"""Adjacency links: a knowledge chunk's neighbours in its source, spreading activation
over them, and lateral inhibition within one cluster. Pure functions, no I/O.

A chunk is addressed by (source, position) (``packs/store/rows.py::knowledge_id``), so
its neighbours' ids are known without an index: the turns just before and after a
matched turn in a conversation, the paragraphs around a matched one in a document.

- :func:`neighbour_ids`: Phase A fetches the neighbours of its best candidates, so the
  reply to a matched question can compete even when it shares no words with the query.
- :func:`spread`: Phase B gives each candidate ``weight * decay**(d-1) * max(0, s_i)`` of
  every candidate ``i`` at distance ``d <= hops`` in the same source (one step of
  spreading activation, Collins and Loftus 1975; the decaying spread of ACT-R's
  associative activation, Anderson 1983).
- :func:`inhibited_order`: the top-k2 is picked greedily, and each pick lowers its
  cluster neighbours' scores by ``inhibition``, so one passage can't fill every slot
  (lateral inhibition, as MMR's novelty term does for near-duplicates; Carbonell and
  Goldstein 1998).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from packs.store.rows import knowledge_id

Array = NDArray[np.float64]


def distances(sources: Sequence[str | None], positions: Sequence[int | None]) -> Array:
    """Pairwise distance in position between candidates of one source; ``inf`` between
    sources, for rows without a position (memories) and on the diagonal."""
    n = len(sources)
    codes: dict[str, int] = {}
    src = np.array(
        [
            -1 if s is None or p is None else codes.setdefault(s, len(codes))
            for s, p in zip(sources, positions, strict=True)
        ],
        dtype=np.int64,
    )
    pos = np.array([0 if p is None else int(p) for p in positions], dtype=np.float64)
    d = np.abs(pos[:, None] - pos[None, :]) if n else np.zeros((0, 0))
    same = (src[:, None] == src[None, :]) & (src[:, None] >= 0)
    out = np.where(same, d, np.inf)
    np.fill_diagonal(out, np.inf)
    return out


def neighbour_ids(
    sources: Sequence[str | None],
    positions: Sequence[int | None],
    seeds: Sequence[int],
    hops: int,
) -> list[str]:
    """The ids of the chunks within ``hops`` of each seed candidate in its source, nearest
    first, without duplicates (whether or not they exist: a lookup drops the missing)."""
    out: dict[str, None] = {}
    for hop in range(1, hops + 1):
        for i in seeds:
            source, position = sources[i], positions[i]
            if source is None or position is None:
                continue
            for p in (int(position) - hop, int(position) + hop):
                if p >= 0:
                    out.setdefault(knowledge_id(source, p))
    return list(out)


def spread(
    score: NDArray[np.floating], dist: Array, weight: float, decay: float, hops: int
) -> Array:
    """Each candidate's score plus the decayed, positive scores of its cluster neighbours
    (one step, from the scores before spreading, so the order of candidates is moot)."""
    s = np.asarray(score, dtype=np.float64)
    if weight <= 0 or hops < 1 or s.size == 0:
        return s.copy()
    near = np.isfinite(dist) & (dist <= hops)
    gain = np.where(near, decay ** np.maximum(dist - 1.0, 0.0), 0.0)
    return s + weight * gain @ np.maximum(s, 0.0)


def inhibited_order(
    score: NDArray[np.floating], dist: Array, inhibition: float, hops: int, k2: int
) -> NDArray[np.int64]:
    """The best ``k2`` candidates, picked one at a time; each pick lowers the score of the
    candidates within ``hops`` of it by ``inhibition``. Ties go to the earlier candidate
    (Phase A order), as in :func:`packs.recall.ranking.rerank`."""
    s = np.round(np.asarray(score, dtype=np.float64), 12)
    if inhibition <= 0 or hops < 1:
        return np.lexsort((np.arange(s.size), -s))[:k2].astype(np.int64)
    near = np.isfinite(dist) & (dist <= hops)
    left = s.copy()
    order: list[int] = []
    for _ in range(min(k2, s.size)):
        best = int(np.argmax(left))  # argmax takes the first of equal maxima
        order.append(best)
        left[best] = -np.inf
        left[near[best]] -= inhibition
    return np.asarray(order, dtype=np.int64)
