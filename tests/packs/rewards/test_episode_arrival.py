"""An episode another process served (issue 42): a reward waits for it only while it
may still be on its way, whatever its id claims."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from packs import Pack
from packs.errors import UnknownEpisode
from packs.journal.arrival import minted_at, new_episode_id


def test_an_episode_id_carries_the_moment_it_was_made() -> None:
    now = datetime.now(UTC)
    made = new_episode_id(now)
    assert made.startswith("ep_") and len(made) == 35
    assert minted_at(made) == pytest.approx(now.timestamp(), abs=0.001)
    assert minted_at("ep_" + "g" * 32) is None and minted_at("ep_nope") is None


def test_a_forged_future_id_waits_no_longer_than_a_fresh_one(tmp_path) -> None:
    with Pack.open("p", tmp_path, settings={"flush": {"seconds": 0.5}}) as pack:
        pack.remember("The deploy failed", "Stop the scheduler first")
        pack.flush()
        future = new_episode_id(datetime.now(UTC) + timedelta(days=3650))
        started = time.monotonic()
        with pytest.raises(UnknownEpisode):
            pack.feedback(future, 1.0)
        assert time.monotonic() - started < 5  # 0.5 s + 1 s lag, not ten years
