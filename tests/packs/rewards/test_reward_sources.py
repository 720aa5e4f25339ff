"""Each reward source, on a real Pack, moves utilities by hand-computed amounts."""

from __future__ import annotations

import math
import time

import pytest

from packs import Pack
from packs.errors import InvalidReward, InvalidSettings, UnknownEpisode, UnknownMemory
from packs.hooks import register_hook, unregister_hook
from packs.rewards.sources import from_outcome, from_stars, tally_vote
from tests.support.storage import storage_of

ALPHA = 0.3


def one_memory_episode(pack: Pack, query: str = "earnings tomorrow") -> tuple[str, str]:
    recall = pack.recall(query, k=1)
    return recall.episode_id, recall.ids[0]


def rows(pack, table):
    pack.flush()
    return storage_of(pack)._table(table).to_arrow().to_pylist()


@pytest.mark.parametrize(("stars", "value"), [(1, -1.0), (2, -0.5), (3, 0.0), (4, 0.5), (5, 1.0)])
def test_stars(trading_pack, stars, value):
    assert from_stars(stars) == value
    episode, memory = one_memory_episode(trading_pack)
    result = trading_pack.feedback(episode, stars=stars)
    assert result.utilities[memory] == pytest.approx(ALPHA * value)
    (event,) = rows(trading_pack, "reward_events")
    assert (event["source"], event["signal"], event["magnitude"]) == ("explicit", "stars", stars)


def test_outcome_is_squashed_by_the_pack_scale(tmp_path):
    with Pack.open("pnl", tmp_path, settings={"rewards": {"outcome_scale": 200.0}}) as pack:
        pack.remember("Holding into earnings", "Halved the size")
        episode, memory = one_memory_episode(pack)
        result = pack.outcome(episode, 150.0)  # +150 P&L, scale 200
        assert result.utilities[memory] == pytest.approx(ALPHA * math.tanh(0.75))
        (event,) = rows(pack, "reward_events")
        assert event["magnitude"] == 150.0 and event["value"] == pytest.approx(math.tanh(0.75))


def test_implicit_signals_use_the_vocabulary_and_item_level_credit(trading_pack):
    recall = trading_pack.recall("I missed the breakout, should I buy now?", k=3)
    accepted, ignored = recall.ids[0], recall.ids[1]
    trading_pack.signal(recall.episode_id, "accepted", [accepted])
    trading_pack.signal(recall.episode_id, "ignored", [ignored])
    # implicit weight 0.5: step = 0.3 * 0.5 * (r - 0)
    assert trading_pack.get(accepted)["utility"] == pytest.approx(0.15 * 0.6)
    assert trading_pack.get(ignored)["utility"] == pytest.approx(0.15 * -0.3)
    assert trading_pack.get(recall.ids[2])["reward_count"] == 0
    with pytest.raises(InvalidReward, match="Unknown implicit signal"):
        trading_pack.signal(recall.episode_id, "loved")
    with pytest.raises(UnknownMemory):
        trading_pack.signal(recall.episode_id, "accepted", ["m_not_injected"])


def test_vocabulary_can_be_extended_per_pack(tmp_path):
    settings = {"rewards": {"vocabulary": {"accepted": 0.6, "bookmarked": 0.8}}}
    with Pack.open("vocab", tmp_path, settings=settings) as pack:
        pack.remember("Holding into earnings", "Halved the size")
        episode, memory = one_memory_episode(pack)
        assert pack.signal(episode, "bookmarked").utilities[memory] == pytest.approx(0.12)


def test_majority_vote(trading_pack):
    attempts = {}
    for answer in ("Wait for the retest", "wait  for the RETEST", "Buy now"):
        attempts[trading_pack.recall("I missed the breakout", k=1).episode_id] = answer
    result = trading_pack.vote(attempts)
    assert result.winner == "wait for the retest"
    assert result.counts == {"wait for the retest": 2, "buy now": 1}
    values = sorted(e["value"] for e in rows(trading_pack, "reward_events"))
    assert values == [-1.0, 1.0, 1.0]


def test_vote_tie_rewards_nobody_and_empty_vote_is_refused(trading_pack):
    a = trading_pack.recall("breakout", k=1).episode_id
    b = trading_pack.recall("earnings", k=1).episode_id
    result = trading_pack.vote({a: "yes", b: "no"})
    assert result.winner is None and result.rewards == {}
    assert rows(trading_pack, "reward_events") == []
    with pytest.raises(InvalidReward, match="at least one attempt"):
        trading_pack.vote({})
    with pytest.raises(UnknownEpisode):
        trading_pack.vote({a: "yes", "ep_missing": "yes"})
    assert rows(trading_pack, "reward_events") == []
    assert tally_vote({"x": "A"}, 1.0).values == {"x": 1.0}


def always_true(output, context):
    return True


def test_validation_hook_pass_fail_and_flag(trading_pack):
    episode, memory = one_memory_episode(trading_pack)
    passed = trading_pack.validate(episode, "Lesson text", hook=always_true)
    assert passed.passed and not passed.flagged
    assert passed.reward.utilities[memory] == pytest.approx(ALPHA * 0.25)
    failed = trading_pack.validate(episode, "bad", hook=lambda out, ctx: "bad" not in out)
    assert failed.passed is False and failed.flagged
    q = ALPHA * 0.25
    assert failed.reward.utilities[memory] == pytest.approx(q + ALPHA * (-1.0 - q))
    logged = rows(trading_pack, "validations")
    assert [v["passed"] for v in logged] == [True, False]


def test_validation_hook_from_settings_by_name(tmp_path):
    register_hook("reward-sources-always-true", always_true)
    settings = {"rewards": {"validation_hook": "reward-sources-always-true"}}
    try:
        with Pack.open("hooked", tmp_path, settings=settings) as pack:
            pack.remember("Holding into earnings", "Halved the size")
            episode, _ = one_memory_episode(pack)
            assert pack.validate(episode, "fine").passed is True
    finally:
        unregister_hook("reward-sources-always-true")


def raises(output, context):
    raise RuntimeError("hook bug")


@pytest.mark.parametrize(
    ("hook", "error"),
    [
        (raises, "raised RuntimeError: hook bug"),
        (lambda out, ctx: "yes", "returned str, not bool"),
        (lambda out, ctx: time.sleep(5), "timed out"),
    ],
)
def test_broken_hooks_are_recorded_never_raised(tmp_path, hook, error):
    with Pack.open("hooks", tmp_path, settings={"rewards": {"validation_timeout_s": 0.2}}) as pack:
        pack.remember("Holding into earnings", "Halved the size")
        episode, memory = one_memory_episode(pack)
        started = time.monotonic()
        result = pack.validate(episode, "output", hook=hook)
        assert time.monotonic() - started < 2.0
        assert result.passed is None and result.flagged and error in result.error
        assert result.reward is None and pack.get(memory)["reward_count"] == 0
        (logged,) = rows(pack, "validations")
        assert error in logged["error"] and logged["flagged"]


def test_no_hook_configured_is_a_clear_error(trading_pack):
    episode, _ = one_memory_episode(trading_pack)
    with pytest.raises(InvalidSettings, match="no validation hook"):
        trading_pack.validate(episode, "output")


def test_late_and_repeated_rewards(trading_pack, tmp_path):
    episode, memory = one_memory_episode(trading_pack)
    trading_pack.close()
    with Pack.open("test", tmp_path) as later:  # hours later, another process
        later.feedback(episode, 1.0)
        later.feedback(episode, 1.0)
        assert later.get(memory)["utility"] == pytest.approx(0.3 + 0.3 * 0.7)
        assert later.feedback(episode, 1.0, idempotency_key="k").applied == 1
        assert later.feedback(episode, 1.0, idempotency_key="k").duplicate


@pytest.mark.parametrize("amount", [float("nan"), float("inf"), "12", None])
def test_bad_outcome_amounts(trading_pack, amount):
    episode, _ = one_memory_episode(trading_pack)
    with pytest.raises(InvalidReward):
        trading_pack.outcome(episode, amount)
    assert rows(trading_pack, "reward_events") == []


@pytest.mark.parametrize("stars", [0, 6, 2.5, True, "5"])
def test_bad_stars(trading_pack, stars):
    episode, _ = one_memory_episode(trading_pack)
    with pytest.raises(InvalidReward):
        trading_pack.feedback(episode, stars=stars)


def test_reward_for_an_episode_of_another_pack(tmp_path):
    with Pack.open("a", tmp_path) as a, Pack.open("b", tmp_path) as b:
        a.remember("Holding into earnings", "Halved the size")
        episode, _ = one_memory_episode(a)
        with pytest.raises(UnknownEpisode):
            b.feedback(episode, 1.0)


def test_switched_off_source_is_recorded_with_weight_zero(tmp_path):
    settings = {"rewards": {"enabled": ["explicit"]}}
    with Pack.open("off", tmp_path, settings=settings) as pack:
        pack.remember("Holding into earnings", "Halved the size")
        episode, memory = one_memory_episode(pack)
        pack.outcome(episode, 5.0)
        assert pack.get(memory)["utility"] == 0.0 and pack.get(memory)["reward_count"] == 0
        (event,) = rows(pack, "reward_events")
        assert event["weight"] == 0.0 and event["source"] == "outcome"


def test_two_packs_with_different_wiring_diverge(tmp_path):
    wirings = {
        "journal": {"alpha": 0.3, "rewards": {"outcome_scale": 1.0}},
        "platform": {
            "alpha": 0.1,
            "rewards": {"outcome_scale": 100.0, "weights": {"implicit": 0.1}},
        },
    }
    utilities = {}
    for name, settings in wirings.items():
        with Pack.open(name, tmp_path, settings=settings) as pack:
            pack.remember("Holding into earnings", "Halved the size")
            episode, memory = one_memory_episode(pack)
            pack.outcome(episode, 2.0)
            pack.signal(episode, "accepted")
            utilities[name] = pack.get(memory)["utility"]
    q = 0.3 * math.tanh(2.0)
    assert utilities["journal"] == pytest.approx(q + 0.3 * 0.5 * (0.6 - q))
    q = 0.1 * math.tanh(0.02)
    assert utilities["platform"] == pytest.approx(q + 0.1 * 0.1 * (0.6 - q))
    assert utilities["journal"] != pytest.approx(utilities["platform"])


def test_outcome_squash_by_hand():
    assert from_outcome(0.0, 1.0) == 0.0
    assert from_outcome(1e9, 1.0) == pytest.approx(1.0)
    assert from_outcome(-1.0, 2.0) == pytest.approx(math.tanh(-0.5))
