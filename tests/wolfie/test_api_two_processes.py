"""One episode seen by every process (issue 42): two ``wolfie api`` processes over one
Pack folder, the recall sent to one and the reward to the other at once, as a load
balancer would. Before, the other process answered 404 ``UnknownEpisode`` until the
serving process had flushed and its own table version caught up (2 runs in 3)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from packs import Pack
from tests.support.api_server import api_server

pytestmark = pytest.mark.slow

QUERY = {"query": "the deploy failed with a locked database", "k": 2}


def test_a_reward_on_one_process_for_an_episode_served_by_another(tmp_path: Path):
    with Pack.open("desk", tmp_path) as pack:
        pack.remember("The deploy failed with a locked database", "Stop the scheduler first")
        pack.remember("The deploy failed on a full disk", "Prune old images first")
    with (
        api_server(tmp_path, "desk") as first,
        api_server(tmp_path, "desk") as second,
        httpx.Client(base_url=first, timeout=60) as a,
        httpx.Client(base_url=second, timeout=60) as b,
    ):
        for n in range(4):
            here, there = (a, b) if n % 2 == 0 else (b, a)
            episode = here.post("/v1/packs/desk/recall", json=QUERY).json()["episode_id"]
            rated = there.post(f"/v1/packs/desk/episodes/{episode}/feedback", json={"rating": 1})
            assert rated.status_code == 200, rated.text  # at once: no retry
            assert rated.json()["applied"] == 2
        started = time.monotonic()
        never = b.post("/v1/packs/desk/episodes/ep_nope/feedback", json={"rating": 1})
        assert never.status_code == 404 and time.monotonic() - started < 2  # not waited for
        old = "ep_" + "0" * 12 + "f" * 20  # minted in 1970: can't be on its way
        started = time.monotonic()
        assert (
            b.post(f"/v1/packs/desk/episodes/{old}/feedback", json={"rating": 1}).status_code == 404
        )
        assert time.monotonic() - started < 2
    with Pack.open("desk", tmp_path, read_only=True) as pack:
        assert pack.count("reward_events") == 8 and pack.count("episodes") == 4
