"""One reward verb (issue 43): ``Pack.reward(episode_id, Rating | Signal | Outcome)``.

Every kind becomes one event through :func:`packs.rewards.sources.event_of` and lands
through the one path; the old verbs are deprecated wrappers that warn at the caller's
line and give what ``reward`` gives.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from packs import Outcome, Pack, Rating, Signal
from packs.errors import InvalidReward
from packs.journal.episodes import EpisodeLog
from packs.records import FeedbackResult
from packs.rewards.sources import RewardEvent, event_of
from packs.settings import RewardSettings
from tests.support.packs import SeededEmbedder

WIRING = RewardSettings()


def test_each_kind_becomes_one_event():
    assert event_of(Rating(0.5), WIRING) == RewardEvent(0.5, "explicit", "rating", 0.5)
    assert event_of(Rating(stars=5), WIRING) == RewardEvent(1.0, "explicit", "stars", 5.0)
    accepted = WIRING.vocabulary["accepted"]
    assert event_of(Signal("accepted", ["m1"]), WIRING) == RewardEvent(
        accepted, "implicit", "accepted", accepted, ["m1"]
    )
    event = event_of(Outcome(2.0), RewardSettings(outcome_scale=2.0))
    assert event.source == "outcome" and event.signal == "measured"
    assert event.magnitude == 2.0 and event.value == pytest.approx(0.7615941559557649)


@pytest.mark.parametrize(
    "reward",
    [Rating(), Rating(0.5, 4), Rating(2.0), Rating(stars=6), Signal("nope"), Outcome(float("nan"))],
)
def test_a_bad_reward_is_refused(reward):
    with pytest.raises(InvalidReward):
        event_of(reward, WIRING)


def test_what_is_no_reward_is_refused(tmp_path):
    with Pack.open("p", tmp_path, embedder=SeededEmbedder()) as pack:
        pack.remember("a question", "an answer")
        episode = pack.recall("a question").episode_id or ""
        with pytest.raises(InvalidReward, match="Rating, a Signal or an Outcome"):
            pack.reward(episode, 1.0)  # type: ignore[arg-type]


def _rewarded(tmp_path: Path, name: str, give: Callable[[Pack, str], FeedbackResult]):
    """A fresh Pack of two memories, one recall, one reward: the result and its log."""
    with Pack.open(name, tmp_path, embedder=SeededEmbedder()) as pack:
        pack.remember("how to deploy", "run the deploy script")
        pack.remember("how to deploy safely", "deploy behind a flag")
        episode = pack.recall("how to deploy").episode_id or ""
        result = give(pack, episode)
        log = pack.reward_log().select("source", "signal", "magnitude", "value", "q_after")
        return result, log.sort("q_after").rows()


def _same(old: FeedbackResult, new: FeedbackResult) -> None:
    assert (old.source, old.value, old.applied, old.duplicate) == (
        new.source,
        new.value,
        new.applied,
        new.duplicate,
    )
    assert sorted(old.track_records.values()) == pytest.approx(sorted(new.track_records.values()))


OLD_AND_NEW = {
    "feedback": (lambda p, e: p.feedback(e, 0.5), lambda p, e: p.reward(e, Rating(0.5))),
    "stars": (lambda p, e: p.feedback(e, stars=2), lambda p, e: p.reward(e, Rating(stars=2))),
    "outcome": (lambda p, e: p.outcome(e, 3.0), lambda p, e: p.reward(e, Outcome(3.0))),
    "signal": (lambda p, e: p.signal(e, "edited"), lambda p, e: p.reward(e, Signal("edited"))),
}


@pytest.mark.parametrize("verb", sorted(OLD_AND_NEW))
def test_an_old_verb_warns_at_the_caller_and_gives_what_reward_gives(tmp_path, verb):
    old, new = OLD_AND_NEW[verb]
    with pytest.warns(DeprecationWarning, match=r"Pack\.\w+\(\) is deprecated.*Pack\.reward") as w:
        old_result, old_log = _rewarded(tmp_path / "old", "old", old)
    assert [Path(x.filename).name for x in w] == [Path(__file__).name]  # the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # reward itself never warns
        new_result, new_log = _rewarded(tmp_path / "new", "new", new)
    _same(old_result, new_result)
    assert old_log == new_log and len(new_log) == 2


def test_a_reward_reads_the_query_vector_once(tmp_path, monkeypatch):
    reads = []
    original = EpisodeLog.query_vector

    def counted(self: EpisodeLog, episode_id: str):
        reads.append(episode_id)
        return original(self, episode_id)

    with Pack.open("p", tmp_path, embedder=SeededEmbedder()) as pack:
        pack.remember("a question", "an answer")
        episode = pack.recall("a question").episode_id or ""
        monkeypatch.setattr(EpisodeLog, "query_vector", counted)
        assert pack.reward(episode, Rating(1.0)).applied == 1
    assert reads == [episode]
