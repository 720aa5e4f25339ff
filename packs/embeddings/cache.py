"""A bounded LRU of query embeddings, so a repeated query skips the model.

Agents repeat themselves: the same question each turn, the same tool prompt. The model
dominates a recall's time (about 10-30 ms for one MiniLM query on 2 cores, docs/recall.md),
while a lookup here is microseconds. Keys are the exact query text, so only identical
queries hit; the stored vectors are read-only so a caller can't corrupt a cached entry.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from packs.errors import InvalidInput

# Hand-set: 1,024 x 384 float32 is 1.5 MB, plenty for one agent's repeated prompts.
DEFAULT_QUERY_CACHE = 1_024


class QueryEmbeddingCache:
    """``embed(text, model)``: the cached vector of ``text``, else ``model([text])[0]``."""

    def __init__(self, max_entries: int = DEFAULT_QUERY_CACHE) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise InvalidInput(f"max_entries must be an int >= 0, got {max_entries!r}.")
        self.max_entries = max_entries
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, text: str, model: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        cached = self._vectors.get(text)
        if cached is not None:
            self._vectors.move_to_end(text)
            self.hits += 1
            return cached
        self.misses += 1
        vector = np.array(model([text])[0], dtype=np.float32)
        vector.flags.writeable = False
        if self.max_entries:
            self._vectors[text] = vector
            while len(self._vectors) > self.max_entries:
                self._vectors.popitem(last=False)
        return vector

    def clear(self) -> None:
        self._vectors.clear()
