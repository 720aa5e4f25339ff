"""Maintenance with retention 0 beside a busy server, as two processes (issue 23).

Bug: ``optimize()`` with ``cleanup_older_than=0`` deletes the files of every old version,
including the one another process was reading at that moment, and that process's calls
failed in bursts with a bare ``RuntimeError: lance error: Not found`` (735 of 882 calls
in 40 s, measured with ``tests/support/retention.py``). A vanished file is now transient:
the read or commit is retried on the latest version, whose files exist.
"""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from packs import KnowledgeChunk, Pack
from tests.support.retention import maintain_loop, serve_loop

pytestmark = pytest.mark.slow

SECONDS = 20.0


def test_a_server_beside_retention_zero_maintenance_never_fails(tmp_root: Path):
    with Pack.open("race", tmp_root) as pack:
        pack.add_knowledge(
            [
                KnowledgeChunk(f"Key rotation step {i}: publish, wait, retire.", "keys.md", i)
                for i in range(20)
            ]
        )
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as pool:
        upkeep = pool.submit(maintain_loop, str(tmp_root), SECONDS)
        server = pool.submit(serve_loop, str(tmp_root), SECONDS)
        maintained, served = upkeep.result(timeout=600), server.result(timeout=600)
    assert maintained["rounds"] >= 3  # old versions were really removed under the server
    assert served["calls"] >= 10
    assert served["failures"] == [], served["failures"][:3]
    with Pack.open("race", tmp_root, read_only=True) as pack:
        assert pack.count("episodes") == served["calls"]
