"""Admission control through the Python API (issue 30): with the Pack's policy on,
``remember`` stores, merges, supersedes, holds or refuses, always with a reason; a held
memory joins recall once a repeat or a positive reward of its episode confirms it.

Regression (peers' users' top complaint): "add() stores junk, or stores nothing and says
nothing"; before, every remember was stored unless it was a near-duplicate.
"""

from __future__ import annotations

import pytest

from packs import Pack
from packs.errors import InvalidInput, InvalidSettings

ON = {"admission": {"policy": "on"}}
HOST = ("What is the staging database host?", "The staging database host is db-old.internal")
GUESS = ("Which port does the staging database use?", "I think port 5433, not sure")


@pytest.fixture
def gated(tmp_path):
    with Pack.open("gated", tmp_path, settings=ON) as handle:
        yield handle


def test_the_policy_is_off_by_default_and_stores_chatter_as_before(pack: Pack) -> None:
    assert pack.settings.admission.policy == "off"
    chatter = pack.remember("hi", "thanks!", confidence=0.1)
    assert chatter.status == "created" and pack.get(chatter.id or "")["held_at"] is None


def test_chatter_is_refused_with_a_reason_and_nothing_is_stored(gated: Pack) -> None:
    before = gated.count()
    refused = gated.remember("ok, sounds good", "thanks, will do!")
    assert (refused.id, refused.status) == (None, "refused")
    assert refused.reason is not None and refused.reason.startswith("boilerplate: 0 content words")
    assert gated.count() == before


def test_a_paraphrase_saying_the_same_is_refused_as_redundant(gated: Pack) -> None:
    stored = gated.remember(
        "Which broker handles options trades?", "Options trades go through Interactive Brokers"
    )
    again = gated.remember(
        "Which broker do I use for options?", "I route options trades through Interactive Brokers"
    )
    assert again.status == "refused" and again.id is None
    assert f"redundant: memory {stored.id} already says this" in (again.reason or "")


def test_a_reworded_correction_supersedes_but_a_neighbouring_fact_does_not(gated: Pack) -> None:
    approver = gated.remember(
        "Who approves production releases?", "Production releases are approved by Alice Moreau"
    )
    db = gated.remember(
        "Which host runs the billing database?", "The billing database runs on pg-1.internal"
    )
    api = gated.remember(
        "Which host runs the billing API?", "The billing API runs on api-1.internal"
    )
    assert api.status == "created" and gated.get(db.id or "")["superseded_at"] is None
    new = gated.remember(
        "Who signs off production releases?", "Production releases are now approved by Bob Tanaka"
    )
    assert (new.status, new.superseded) == ("superseded", approver.id)
    prompt = gated.search("who signs off a production release").prompt
    assert "Bob Tanaka" in prompt and "Alice Moreau" not in prompt


def test_a_low_confidence_memory_is_held_until_a_repeat_confirms_it(gated: Pack) -> None:
    guess = gated.remember(*GUESS, confidence=0.3)
    assert guess.status == "held" and "confidence 0.30 is below 0.50" in (guess.reason or "")
    assert guess.id not in gated.search("staging database port").ids
    assert [h.id for h in gated.probation.held()] == [guess.id]
    assert gated.probation.held()[0].reason == guess.reason
    again = gated.remember(GUESS[0], GUESS[1] + ".")
    assert (again.id, again.status) == (guess.id, "merged")
    assert "was on probation" in (again.reason or "")
    assert guess.id in gated.search("staging database port").ids and gated.probation.held() == []


def test_a_positive_reward_of_its_episode_confirms_a_held_memory(gated: Pack) -> None:
    gated.remember(*HOST)
    episode = gated.recall("which port does staging's database use").episode_id or ""
    guess = gated.remember(*GUESS, confidence=0.2, episode_id=episode)
    other = gated.recall("the staging database host").episode_id or ""
    wrong = gated.remember(
        "Which user runs the staging database?",
        "Maybe the postgres user",
        confidence=0.2,
        episode_id=other,
    )
    gated.feedback(other, -1.0)  # a bad outcome confirms nothing
    gated.feedback(episode, 1.0)
    waiting = [h.id for h in gated.probation.held()]
    assert waiting == [wrong.id] and guess.id in gated.search("staging database port").ids


def test_a_poor_track_record_nearby_holds_a_memory(gated: Pack) -> None:
    gated.remember("The nightly scheduler hangs", "Restart the scheduler")
    gated.remember("The cron runner deadlocks at midnight", "Clear the cron lock file")
    for _ in range(3):  # both misled three times: Q = -0.657 each
        recall = gated.recall("the scheduler hangs at night")
        assert len(recall.ids) == 2
        gated.feedback(recall.episode_id or "", -1.0)
    gated.flush()  # the track records are read as stored (as other processes' rewards are)
    doubtful = gated.remember("Overnight batch jobs freeze", "Kill the batch and run it again")
    assert doubtful.status == "held"
    assert doubtful.reason == (
        "its nearest rewarded memories predict a utility of -0.66, below -0.30"
    )


def test_an_operator_admits_by_hand_and_scopes_see_only_their_own(gated: Pack) -> None:
    alice = gated.remember(*GUESS, confidence=0.1, scope="alice")
    bob = gated.remember(*GUESS, confidence=0.1, scope="bob")
    assert [h.id for h in gated.probation.held("alice")] == [alice.id]
    assert {h.id for h in gated.probation.held(every=True)} == {alice.id, bob.id}
    assert gated.probation.admit([alice.id or "", "m_unknown"]) == [alice.id]
    assert alice.id in gated.search("staging database port", scope="alice").ids
    with pytest.raises(InvalidInput):
        gated.probation.admit("m_x")  # type: ignore[arg-type]


def test_bad_admission_input_is_refused_and_changes_nothing(gated: Pack) -> None:
    before = gated.count()
    for bad in (float("nan"), 1.5, -0.1, True, "high"):
        with pytest.raises(InvalidInput, match="confidence"):
            gated.remember(*GUESS, confidence=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="episode_id"):
        gated.remember(*GUESS, episode_id="  ")
    with pytest.raises(InvalidSettings, match=r"admission\.policy"):
        gated.configure(admission={"policy": "maybe"})
    assert gated.count() == before and gated.settings.admission.policy == "on"
