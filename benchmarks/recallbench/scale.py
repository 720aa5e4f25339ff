"""Large Packs for the ``writes`` and ``scopes`` sections: built column-wise, with scopes.

A Pack of ``rows`` knowledge rows is written straight to ``memories`` in Arrow batches
(perturbed copies of word-hash-embedded task sentences, as in ``ann.py``), each row in
one of ``scopes`` scopes, the same number in each, drawn at random (metadata and tags as
``add_knowledge`` writes them), or shared when ``scopes`` is 0, then maintained (``pack.upkeep.maintain``: compaction, the id
BTREE, the ``tags`` LABEL_LIST and the IVF_SQ vector index), as a real Pack of that size
is. The vectors are kept in a ``.npy`` file beside it for the exact truth. With
``--root`` a Pack built before (same rows, scopes and seed) is reused.

The Pack is recorded in the default embedder's vector space (:class:`FastMiniLMSpace`:
word-hash vectors under all-MiniLM-L6-v2's name), so the shipped embedder can write to it
in the ``writes`` section; searches that check exactness embed with the same word hash.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
from bench_storage import storage_of

from packs import Pack
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.store import schemas
from packs.store.rows import tags_of
from packs.store.scopes import SCOPE_KEY

from .corpus import WordHashEmbedder, complete_columns, generate_sentences, perturbed

_BATCH = 100_000  # rows per append commit


class FastMiniLMSpace(WordHashEmbedder):
    """The word-hash embedder under the default embedder's name and space."""

    info = OnnxMiniLM.info


@dataclass(frozen=True)
class BuiltPack:
    name: str
    root: Path
    rows: int
    scopes: int
    vectors: np.ndarray  # row i's vector, as written
    scope_ids: np.ndarray  # row i's scope number (all -1 without scopes)
    texts: list[str]  # the base sentences the rows are copies of
    build_s: float
    maintain_s: float
    indexes: list[str]

    def rows_of(self, scope: int) -> np.ndarray:
        """The rows a caller in scope ``u<scope>`` sees: its own and the shared ones."""
        return np.flatnonzero((self.scope_ids == scope) | (self.scope_ids < 0))

    def row_id(self, row: int) -> str:
        return f"k_scale_{row}"


def scope_ids(rows: int, scopes: int, seed: int) -> np.ndarray:
    if not scopes:
        return np.full(rows, -1)
    return np.random.default_rng(seed).permutation(rows) % scopes


def _columns(
    lo: int,
    vectors: np.ndarray,
    texts: list[str],
    scopes: np.ndarray,
    schema: pa.Schema,
    now: datetime,
) -> pa.Table:
    n = len(vectors)
    rows = range(lo, lo + n)
    metas = [{SCOPE_KEY: f"u{scopes[i]}"} if scopes[i] >= 0 else {} for i in rows]
    given: dict[str, pa.Array] = {
        "id": pa.array([f"k_scale_{i}" for i in rows]),
        "kind": pa.array([schemas.KIND_KNOWLEDGE] * n),
        "intent_text": pa.array([f"{texts[i % len(texts)]} (note {i})" for i in rows]),
        "intent_embedding": pa.FixedSizeListArray.from_arrays(
            pa.array(vectors.ravel(), pa.float32()), vectors.shape[1]
        ),
        "source": pa.array([f"bench://scale-{i // 40}" for i in rows]),
        "source_position": pa.array([i % 40 for i in rows], pa.int64()),
        "metadata_json": pa.array([json.dumps(m, sort_keys=True) if m else None for m in metas]),
        "tags": pa.array([tags_of(m) for m in metas], pa.list_(pa.string())),
    }
    return complete_columns(given, n, schema, now)


def build_scale_pack(root: Path, rows: int, scopes: int, seed: int) -> BuiltPack:
    """The Pack ``scale<rows>x<scopes>`` under ``root`` (reused when it is there)."""
    name = f"scale{rows}x{scopes}"
    embedder = FastMiniLMSpace()
    texts = generate_sentences(3_000, random.Random(seed))
    saved = root / f"{name}.npy"
    members = scope_ids(rows, scopes, seed)
    if saved.exists() and (root / name).exists():
        meta = json.loads((root / f"{name}.json").read_text())
        return BuiltPack(name, root, rows, scopes, np.load(saved), members, texts, **meta)
    base = embedder.embed(texts)
    rng = np.random.default_rng(seed)
    now = datetime.now(UTC)
    exact = np.empty((rows, embedder.info.dim), dtype=np.float32)
    start = time.perf_counter()
    with Pack.open(name, root, embedder=embedder) as pack:
        schema = schemas.memories_schema(pack.embedding.dim)
        for lo in range(0, rows, _BATCH):
            idx = np.arange(lo, min(rows, lo + _BATCH))
            vectors = perturbed(base[idx % len(texts)], rng)
            exact[idx] = vectors
            storage_of(pack).append(
                schemas.MEMORIES, _columns(lo, vectors, texts, members, schema, now)
            )
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        report = pack.upkeep.maintain(retention=timedelta(0))
        meta = {
            "build_s": build_s,
            "maintain_s": time.perf_counter() - start,
            "indexes": report.indexes_built,
        }
    np.save(saved, exact)
    (root / f"{name}.json").write_text(json.dumps(meta))
    return BuiltPack(name, root, rows, scopes, exact, members, texts, **meta)
