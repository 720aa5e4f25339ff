"""A correction supersedes; it is never absorbed (issue 30), through the Python API.

Regression: a ``remember`` of the same situation with a new fact ("The staging database
host moved to db-new.internal") answered ``merged`` and every later recall showed the old
fact; 0 of 5 such pairs recalled the newer fact.
"""

from __future__ import annotations

import pytest

from packs import Pack
from packs.admission.compare import abbreviates, tokens
from packs.corrections import Corrections
from packs.errors import InvalidInput, UnknownMemory

OLD = ("What is the staging database host?", "The staging database host is db-old.internal")
NEW = ("What is the staging database host?", "The staging database host moved to db-new.internal")
REWORDED = ("Which host runs the staging database?", "Staging DB now lives on db-new.internal")

# Five facts and their corrections (hosts, deploy steps, versions, approvers, backup
# locations), the second of each reworded, with the value that must be recalled and the
# one that must not.
FIVE = [
    (
        "Which host runs the billing database?",
        "The billing database runs on pg-billing-1.internal",
        "Which host is the billing database on?",
        "Billing DB moved to pg-billing-2.internal",
        "pg-billing-2.internal",
        "pg-billing-1.internal",
    ),
    (
        "How do we deploy the API service?",
        "Build the image, run the smoke tests, then roll out with kubectl",
        "How do we deploy the API?",
        "Build the image, roll out with kubectl, then run the smoke tests",
        "roll out with kubectl, then run the smoke tests",
        "run the smoke tests, then roll out",
    ),
    (
        "Which Redis version does the cache use?",
        "The cache runs Redis 6.2",
        "What Redis version does the cache use?",
        "Cache upgraded to Redis 7.2",
        "Redis 7.2",
        "Redis 6.2",
    ),
    (
        "Who approves access to the production console?",
        "Access to the production console is approved by Karen Ito",
        "Who approves production console access?",
        "Production console access is now approved by Luis Ortega",
        "Luis Ortega",
        "Karen Ito",
    ),
    (
        "Where are the weekly backups stored?",
        "Weekly backups are stored in gs://acme-backups/weekly",
        "Where are weekly backups kept?",
        "Weekly backups moved to s3://acme-dr/weekly",
        "s3://acme-dr/weekly",
        "gs://acme-backups/weekly",
    ),
]
UNRELATED = [
    ("How do I book a meeting room?", "Book meeting rooms in the calendar app under Resources"),
    ("What day is the team lunch?", "Team lunch is on Thursdays at the canteen"),
    (
        "How do I claim travel expenses?",
        "Submit travel expenses in the finance portal within 30 days",
    ),
]


def test_the_issue_case_supersedes_and_recall_shows_only_the_new_fact(pack: Pack) -> None:
    old = pack.remember(*OLD)
    new = pack.remember(*NEW)
    assert (new.status, new.superseded) == ("superseded", old.id)
    assert new.id != old.id and new.similarity == pytest.approx(1.0, abs=1e-4)
    assert "db-new.internal" in (new.reason or "")
    prompt = pack.recall("What is the staging database host?").prompt
    assert "db-new.internal" in prompt and "db-old.internal" not in prompt
    marked = pack.get(old.id)
    assert marked["superseded_by"] == new.id and marked["superseded_at"] is not None
    assert "db-new.internal" in marked["superseded_reason"]
    events = [(v.event, v.changes) for v in pack.history(old.id)]
    assert events[-1][0] == "superseded" and events[-1][1]["superseded_by"].new == new.id
    later = pack.history(new.id)[-1]
    assert (later.event, later.changes["supersedes"].new) == ("supersedes", old.id)


def test_a_reworded_correction_supersedes_the_correction_before_it(pack: Pack) -> None:
    first, second = pack.remember(*OLD), pack.remember(*NEW)
    # the correction said again in other words ("DB" for "database") repeats it (issue 42)
    same = pack.remember(*REWORDED)
    assert (same.status, same.id) == ("merged", second.id)
    third = pack.remember(REWORDED[0], "Staging DB now lives on db-3.internal")
    assert (third.status, third.superseded) == ("superseded", second.id)
    shown = [item.id for item in pack.recall("Which host runs the staging database?").items]
    assert third.id in shown and first.id not in shown and second.id not in shown


def test_a_repeat_still_merges(pack: Pack) -> None:
    old = pack.remember(*OLD)
    again = pack.remember(
        "What is the staging database host?", "the staging database host is db-old.internal!"
    )
    assert (again.status, again.id) == ("merged", old.id)
    assert pack.get(old.id)["superseded_at"] is None


def test_a_shorter_repeat_keeps_what_was_learned(pack: Pack) -> None:
    """Bug (issue 42): the same advice said shorter superseded its memory (response
    cosine 0.79 < 0.88), and the new memory started from zero utility."""
    old = pack.remember(
        "I chased an entry after missing the breakout", "Wait for a pullback before entering"
    )
    pack.feedback(pack.recall("chased the breakout").episode_id or "", 1.0)
    learned = pack.get(old.id)["utility"]
    assert learned > 0
    again = pack.remember("I chased the entry after I missed the breakout", "Wait for a pullback")
    assert (again.status, again.id) == ("merged", old.id)
    row = pack.get(old.id)
    assert row["superseded_at"] is None and row["utility"] == learned


ROLLBACK = "How do we roll back the staging database?"


def test_an_abbreviated_repeat_keeps_what_was_learned(pack: Pack) -> None:
    """Bug (issue 42): "DB" for "database" read as a new value, so the same advice
    superseded its memory and the new one started from zero utility."""
    old = pack.remember(ROLLBACK, "Restore the staging database from the latest snapshot")
    pack.feedback(pack.recall("roll back staging database").episode_id or "", 1.0)
    learned = pack.get(old.id)["utility"]
    assert learned > 0
    again = pack.remember(ROLLBACK, "Restore the staging DB from the latest snapshot")
    assert (again.status, again.id) == ("merged", old.id)
    row = pack.get(old.id)
    assert row["superseded_at"] is None and row["utility"] == learned


@pytest.mark.parametrize(
    ("value", "old", "held"),
    [
        ("DB", "The staging database host", True),  # a contraction of one word
        ("PR", "open a pull request", True),  # initials of consecutive words
        ("RDS", "Restore the database from a snapshot", False),
        ("B", "Use plan A", False),  # one capital names a value
        ("Db", "the database", False),  # not all capitals
    ],
)
def test_what_counts_as_an_abbreviation_of_the_old_words(value: str, old: str, held: bool) -> None:
    assert abbreviates(value, tokens(old)) is held


def test_an_acronym_the_old_words_do_not_spell_is_still_a_correction(pack: Pack) -> None:
    old = pack.remember(ROLLBACK, "Restore the staging database from the latest snapshot")
    new = pack.remember(ROLLBACK, "Restore the staging database from the latest RDS backup")
    assert (new.status, new.superseded) == ("superseded", old.id)
    assert "RDS" in (new.reason or "")


def test_five_corrections_between_unrelated_notes_recall_only_the_newer_fact(
    pack: Pack,
) -> None:
    """The issue's held-back shape: facts, unrelated notes, then the corrections (each
    reworded), and recall of either wording shows the new value and never the old."""
    olds = []
    for intent, response, *_ in FIVE:
        olds.append(pack.remember(intent, response).id)
        pack.remember(*UNRELATED[len(olds) % len(UNRELATED)])
    news = [pack.remember(intent, response) for _, _, intent, response, *_ in FIVE]
    assert [(n.status, n.superseded) for n in news] == [("superseded", o) for o in olds]
    for (first_q, _, second_q, _, shown, hidden), old, new in zip(FIVE, olds, news, strict=True):
        for question in (first_q, second_q):
            recall = pack.recall(question)
            assert new.id in recall.ids and old not in recall.ids, question
            assert shown in recall.prompt and hidden not in recall.prompt, question
        assert pack.get(old)["superseded_by"] == new.id


def test_a_flipped_polarity_or_outcome_is_a_new_fact(pack: Pack) -> None:
    intent, response = "Bought the breakout on the first retest", "Entered on the retest"
    won = pack.remember(intent, response, outcome="win +2R", polarity="success")
    lost = pack.remember(intent, response + ".", outcome="win +2R", polarity="failure")
    assert (lost.status, lost.superseded) == ("superseded", won.id)
    assert "polarity success -> failure" in (lost.reason or "")
    worse = pack.remember(intent, response + "!", outcome="loss -3R", polarity="failure")
    assert (worse.status, worse.superseded) == ("superseded", lost.id)
    assert "outcome" in (worse.reason or "")


def test_a_correction_in_one_scope_leaves_another_scope_alone(pack: Pack) -> None:
    alice = pack.remember(*OLD, scope="alice")
    bob = pack.remember(*NEW, scope="bob")
    assert bob.status == "created"
    assert pack.get(alice.id)["superseded_at"] is None


def test_a_retried_correction_is_answered_once_and_repairs_a_lost_mark(
    pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that stored the correction and died before marking the old memory left
    both current; the retry finds the row and writes the mark."""
    old = pack.remember(*OLD)
    real = Corrections.mark
    calls: list[str] = []

    def dies(self: Corrections, memory_id: str, *args: object) -> None:
        calls.append(memory_id)
        raise RuntimeError("process died here")

    monkeypatch.setattr(Corrections, "mark", dies)
    with pytest.raises(RuntimeError):
        pack.remember(*NEW)
    monkeypatch.setattr(Corrections, "mark", real)
    assert calls == [old.id] and pack.get(old.id)["superseded_at"] is None
    retried = pack.remember(*NEW)
    assert (retried.status, retried.superseded) == ("superseded", old.id)
    assert pack.remember(*NEW).status == "exists"
    assert pack.get(old.id)["superseded_by"] == retried.id


def test_a_fact_that_changes_back_is_current_again(pack: Pack) -> None:
    old, new = pack.remember(*OLD), pack.remember(*NEW)
    back = pack.remember(*OLD)
    assert (back.id, back.status, back.superseded) == (old.id, "superseded", new.id)
    assert pack.get(old.id)["superseded_at"] is None
    assert pack.get(new.id)["superseded_by"] == old.id
    assert "db-old.internal" in pack.recall(OLD[0]).prompt
    assert "db-new.internal" not in pack.recall(OLD[0]).prompt


def test_a_caller_states_a_correction_outright(pack: Pack) -> None:
    """Issue 42: ``remember(..., supersedes=ID)`` says "this corrects that" where the
    words alone would merge (or say nothing about which memory it corrects)."""
    old = pack.remember(*OLD)
    stated = pack.remember(
        "What is the staging database host?",
        "the staging database host is db-old.internal!",  # a repeat by its words
        supersedes=old.id,
    )
    assert (stated.status, stated.superseded) == ("superseded", old.id)
    assert "stated by the caller" in (stated.reason or "")
    assert pack.get(old.id)["superseded_by"] == stated.id
    shown = [item.id for item in pack.recall("Which host runs the staging database?").items]
    assert stated.id in shown and old.id not in shown


def test_a_stated_correction_reaches_only_its_own_scope(pack: Pack) -> None:
    shared = pack.remember("Where is the VPN config?", "In the ops wiki")
    before = pack.count()
    with pytest.raises(InvalidInput, match="shared by every scope"):
        pack.remember(
            "Where is the VPN config?", "In the vault", scope="mallory", supersedes=shared.id
        )
    with pytest.raises(UnknownMemory):
        pack.remember("Where is the VPN config?", "In the vault", supersedes="m_nope")
    with pytest.raises(InvalidInput, match="supersedes must be a memory id"):
        pack.remember("Where is the VPN config?", "In the vault", supersedes="")  # type: ignore[arg-type]
    assert pack.count() == before and pack.get(shared.id)["superseded_at"] is None
