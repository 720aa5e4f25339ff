"""Bare embedding configurations of all-MiniLM-L6-v2: onnxruntime and the tokenizer, no
Pack, so the benchmark can find the model's limit on this CPU.

Every configuration turns the same texts into the same L2-normalised mean-pooled vectors
(sentence-transformers' pooling): a tokenizer with padding to the longest text of a batch
and truncation at 256 word pieces, one ``InferenceSession.run`` per batch. What varies:

- ``threads``: the session's ``intra_op_num_threads``;
- ``batch``: texts per ``run``;
- ``sort``: batches formed from texts sorted by length (less padding), order restored;
- ``workers``: Python threads calling ``run`` on one shared session at once (onnxruntime
  releases the GIL inside ``run``), each on its own batches;
- :class:`ProcessEngine`: worker processes, each with its own 1-thread session.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256


def tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def session(model: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def token_counts(tok: Any, texts: Sequence[str]) -> np.ndarray:
    """Word pieces per text after truncation (no padding): what the model really reads."""
    return np.array([sum(e.attention_mask) for e in tok.encode_batch(list(texts))])


def run_batch(sess: Any, tok: Any, texts: list[str]) -> np.ndarray:
    encoded = tok.encode_batch(texts)
    ids = np.array([e.ids for e in encoded], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden = sess.run(None, feeds)[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    out: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out.astype(np.float32)


def batches(texts: Sequence[str], size: int, sort: bool) -> list[list[int]]:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if sort else range(len(texts))
    ordered = list(order)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


@dataclass
class SessionEngine:
    """One session in this process; ``workers`` threads share it."""

    name: str
    sess: Any
    tok: Any
    batch: int
    sort: bool = True
    workers: int = 1

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(self.workers) if self.workers > 1 else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        groups = batches(texts, self.batch, self.sort)

        def one(idx: list[int]) -> None:
            out[idx] = run_batch(self.sess, self.tok, [texts[i] for i in idx])

        if self._pool is None:
            for idx in groups:
                one(idx)
        else:
            list(self._pool.map(one, groups))
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


class OwnSessionsEngine:
    """``workers`` threads in this process, each with its own session and tokenizer,
    taking sorted batches in turn (what the shipped embedder does)."""

    def __init__(self, name: str, model: Path, tok_path: Path, workers: int, batch: int) -> None:
        self.name, self.batch = name, batch
        self._runners = [(session(model, 1), tokenizer(tok_path)) for _ in range(workers)]
        self._pool = ThreadPoolExecutor(workers)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        groups = batches(texts, self.batch, True)
        n = len(self._runners)

        def work(k: int) -> None:
            sess, tok = self._runners[k]
            for idx in groups[k::n]:
                out[idx] = run_batch(sess, tok, [texts[i] for i in idx])

        list(self._pool.map(work, range(n)))
        return out

    def close(self) -> None:
        self._pool.shutdown()


def _worker(conn: Connection, model: str, tokenizer_path: str) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sess, tok = session(Path(model), 1), tokenizer(Path(tokenizer_path))
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send([run_batch(sess, tok, texts) for texts in job])


class ProcessEngine:
    """``procs`` spawned processes, each a 1-thread session; sorted batches dealt out in
    turn, so every process gets a similar mix of lengths. Start-up is not timed."""

    def __init__(self, name: str, model: Path, tok_path: Path, procs: int, batch: int) -> None:
        self.name, self.batch = name, batch
        ctx = mp.get_context("spawn")
        self._conns = []
        self._procs = []
        for _ in range(procs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, str(model), str(tok_path)))
            proc.start()
            self._conns.append(parent)
            self._procs.append(proc)
        for conn in self._conns:
            conn.recv()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        groups = batches(texts, self.batch, True)
        shares = [groups[i :: len(self._conns)] for i in range(len(self._conns))]
        for conn, share in zip(self._conns, shares, strict=True):
            conn.send([[texts[i] for i in idx] for idx in share])
        out = np.empty((len(texts), 384), dtype=np.float32)
        for conn, share in zip(self._conns, shares, strict=True):
            for idx, vectors in zip(share, conn.recv(), strict=True):
                out[idx] = vectors
        return out

    def close(self) -> None:
        for conn in self._conns:
            conn.send(None)
        for proc in self._procs:
            proc.join(10)


def _pack_worker(conn: Connection, root: str) -> None:
    from packs import KnowledgeChunk, Pack
    from packs.embeddings.onnx_minilm import OnnxMiniLM

    with Pack.open("bulk", root, embedder=OnnxMiniLM(workers=1)) as pack:
        pack.add_knowledge([KnowledgeChunk("warm up", "bench://warm", 0)])
        conn.send("ready")
        while True:
            job = conn.recv()
            if job is None:
                return
            chunks = [KnowledgeChunk(text, source, pos) for text, source, pos in job]
            conn.send(len(pack.add_knowledge(chunks)))


class PackProcesses:
    """``procs`` spawned processes holding one Pack open (the default embedder with one
    worker each); every call deals the chunks out in turn and waits for all of them."""

    def __init__(self, root: Path, procs: int) -> None:
        ctx = mp.get_context("spawn")
        self._conns, self._procs = [], []
        for _ in range(procs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_pack_worker, args=(child, str(root)))
            proc.start()
            self._conns.append(parent)
            self._procs.append(proc)
        for conn in self._conns:
            conn.recv()

    def add(self, chunks: Sequence[tuple[str, str, int]]) -> int:
        n = len(self._conns)
        for i, conn in enumerate(self._conns):
            conn.send(list(chunks[i::n]))
        return sum(conn.recv() for conn in self._conns)

    def close(self) -> None:
        for conn in self._conns:
            conn.send(None)
        for proc in self._procs:
            proc.join(30)
