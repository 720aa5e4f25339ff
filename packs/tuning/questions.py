"""Questions as the tuner counts them: episodes that asked the same thing.

Two episodes ask *the same question* when their query vectors are at cosine >=
:data:`SAME_QUESTION` (the same words embed identically; a changed space or letter case
stays above it). Held-out evaluation holds out whole questions, so a question's repeats
never inform its own prediction.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# Hand-set: identical wording gives cosine 1 (up to float16 storage, 0.9995); trivial edits
# (case, punctuation, one typo) measured 0.97-0.99 with all-MiniLM-L6-v2, a rewording of
# the same need 0.55-0.95 (data/evals/README.md). Equal to context.key_distinct_cos.
SAME_QUESTION = 0.98
_BLOCK = 2048  # rows per block of the all-pairs product (a 2048 x n float32 block)


def question_ids(vectors: NDArray[np.floating], same: float = SAME_QUESTION) -> NDArray[np.int64]:
    """A question id per row: rows closer than ``same`` are one question (connected
    components of the ``>= same`` graph), numbered by first appearance."""
    x = np.asarray(vectors, dtype=np.float32)
    n = len(x)
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = int(parent[i])
        return i

    for start in range(0, n, _BLOCK):
        block = x[start : start + _BLOCK] @ x.T
        rows, cols = np.nonzero(block >= same)
        for r, c in zip((rows + start).tolist(), cols.tolist(), strict=True):
            if c < r:
                a, b = find(r), find(c)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    roots = np.array([find(i) for i in range(n)], dtype=np.int64)
    _, first = np.unique(roots, return_index=True)
    order = np.argsort(first)
    number = np.empty(len(first), dtype=np.int64)
    number[order] = np.arange(len(first))
    return number[np.searchsorted(np.unique(roots), roots)]


def nearest_other(vectors: NDArray[np.floating], ids: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each question's cosine to its nearest *other* question (one vector per question:
    its first episode's), for the reach (:func:`packs.tuning.fit.reach_of`)."""
    x = np.asarray(vectors, dtype=np.float32)
    _, first = np.unique(ids, return_index=True)
    reps = x[np.sort(first)]
    if len(reps) < 2:
        return np.zeros(0)
    out = np.empty(len(reps))
    for start in range(0, len(reps), _BLOCK):
        block = reps[start : start + _BLOCK] @ reps.T
        block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf
        out[start : start + len(block)] = block.max(axis=1)
    return out
