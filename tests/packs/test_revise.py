"""``Pack.revise`` and ``Pack.history`` through the API (issue 22, "Correct").

What a revision does to the learned utility is docs/rewards.md's "Revising": a new
response or polarity is a new action (utility back to the prior, contextual evidence
dropped, lesson cleared, one ``revision`` event in the log); intent, outcome and
metadata keep what was learned.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import (
    InvalidInput,
    MetadataTooLarge,
    ReadOnlyPack,
    TextTooLong,
    UnknownMemory,
)
from packs.records import MemoryVersion
from tests.support.erasure import files_holding, versions_holding
from tests.support.internals import services_of
from tests.support.old_packs import cut_back
from tests.support.packs import table_versions

INTENT = "The deploy failed with a locked database"
OLD = "Restart the database server."
NEW = "Stop the scheduler before migrating, then rerun the deploy."


def _pairs(version: MemoryVersion) -> dict[str, tuple[object, object]]:
    return {field: (change.old, change.new) for field, change in version.changes.items()}


def _learned(pack: Pack, memory_id: str) -> tuple[float, float, int]:
    row = pack.get(memory_id)
    return row["utility"], row["confidence"], row["reward_count"]


def _punish(pack: Pack, query: str, memory_id: str, times: int = 1) -> None:
    for _ in range(times):
        found = pack.recall(query)
        pack.apply_reward(
            found.episode_id or "",
            -1.0,
            source="explicit",
            signal="rating",
            memory_ids=[memory_id],
        )
    pack.flush()


def test_revise_changes_in_place_and_re_embeds_what_changed(tmp_root):
    with Pack.open("fix", tmp_root) as pack:
        made = pack.remember(INTENT, OLD, metadata={"team": "ops"}).id
        other = pack.remember("Lunch order for the team offsite", "Pizza, no anchovies.").id
        result = pack.revise(
            made,
            intent="Migrations hang while the scheduler holds a lock",
            response=NEW,
            metadata={"team": "infra"},
            source="test",
        )
        assert result.status == "revised" and result.memory_id == made
        row = pack.get(made)
        assert (row["intent_text"], row["response_summary"]) == (
            "Migrations hang while the scheduler holds a lock",
            NEW,
        )
        assert json.loads(row["metadata_json"]) == {"team": "infra"}
        assert "team=infra" in " ".join(row["tags"]) and "team=ops" not in " ".join(row["tags"])
        assert pack.count() == 2
        assert pack.search(NEW, metadata={"team": "infra"}).ids == [made]
        assert pack.search(NEW, metadata={"team": "ops"}).ids == []
        # the embeddings are the new texts': the new intent finds it at cosine 1
        hit = pack.search("Migrations hang while the scheduler holds a lock", k=1).items[0]
        assert hit.id == made and hit.similarity == pytest.approx(1.0, abs=1e-5)
        vectors = pack.query("memories", where={"id": made}, columns=["response_embedding"])
        stored = np.asarray(vectors["response_embedding"][0], dtype=np.float32)
        expected = services_of(pack).embedder.embed([NEW])[0]
        assert float(stored @ expected) == pytest.approx(1.0, abs=1e-5)
        assert pack.search(INTENT, k=2).items[0].similarity < 0.95  # the old intent is gone
        assert pack.get(other)["response_summary"] == "Pizza, no anchovies."


def test_history_lists_creation_merges_and_revisions_durably(tmp_root):
    with Pack.open("fix", tmp_root) as pack:
        made = pack.remember(INTENT, OLD, polarity="success", metadata={"team": "ops"}).id
        merged = pack.remember("Deploy failed because the database was locked", "Restart the db.")
        assert merged.id == made and merged.merged
        pack.revise(made, response=NEW, outcome="fixed", source="cli")
        pack.revise(made, polarity="none", metadata={"team": "infra"})
        again = pack.revise(made, outcome="fixed")
        assert again.status == "unchanged" and again.version is None
    with Pack.open("fix", tmp_root, read_only=True) as reader:
        versions = reader.history(made)
    assert [(v.version, v.event, v.source) for v in versions] == [
        (1, "remember", "api"),
        (2, "merge", "api"),
        (3, "revise", "cli"),
        (4, "revise", "api"),
    ]
    assert _pairs(versions[0]) == {
        "intent": (None, INTENT),
        "response": (None, OLD),
        "polarity": (None, "success"),
        "metadata": (None, {"team": "ops"}),
    }
    assert _pairs(versions[1]) == {"merge_count": (0, 1)}
    assert versions[1].absorbed and versions[1].absorbed["response"] == "Restart the db."
    assert _pairs(versions[2]) == {"response": (OLD, NEW), "outcome": (None, "fixed")}
    assert _pairs(versions[3]) == {
        "polarity": ("success", None),
        "metadata": ({"team": "ops"}, {"team": "infra"}),
    }
    assert [v.at for v in versions] == sorted(v.at for v in versions)
    as_json = [v.to_dict() for v in versions]
    assert json.loads(json.dumps(as_json)) == as_json
    assert as_json[2]["changes"]["response"] == {"old": OLD, "new": NEW}


def test_a_new_response_restarts_the_utility_other_fields_keep_it(tmp_root):
    with Pack.open("fix", tmp_root) as pack:
        made = pack.remember(INTENT, OLD).id
        _punish(pack, "deploy failed on a locked database", made, times=2)
        punished = _learned(pack, made)
        assert punished[0] == pytest.approx(-0.51) and punished[2] == 2
        pack.store_lessons([{"id": made, "experience_summary": "Restarting fixes it."}], [])

        kept = pack.revise(made, intent="Deploy failed: database locked", outcome="still broken")
        assert not kept.version.utility_reset and _learned(pack, made) == punished
        assert pack.get(made)["experience_summary"] == "Restarting fixes it."

        reset = pack.revise(made, response=NEW)
        assert reset.version.utility_reset and reset.version.utility_before == pytest.approx(-0.51)
        assert _pairs(reset.version)["lesson"] == ("Restarting fixes it.", None)
        assert _learned(pack, made) == (0.0, 0.5, 3)  # a full step to r = 0: docs/rewards.md
        assert pack.get(made)["experience_summary"] is None
        log = pack.reward_log().sort("created_at")
        assert log["source"].to_list() == ["explicit", "explicit", "revision"]
        assert log["episode_id"][-1] == reset.version.version_id
        report = pack.rebuild_utilities(write=False)
        assert report.changed == 0 and report.max_utility_drift < 1e-9
        assert pack.maturity().reward_count == 2  # a reset is logged, but is no feedback
        # nothing learned since the reset: a second action change logs no second event
        pack.revise(made, polarity="failure")
        assert pack.reward_log().height == 3 and _learned(pack, made) == (0.0, 0.5, 3)
        # evidence after the revision counts for the new response
        _punish(pack, "deploy failed on a locked database", made)
        assert _learned(pack, made)[0] == pytest.approx(-0.3)


def test_a_revision_drops_contextual_evidence_in_every_handle(tmp_root):
    query = "deploy failed on a locked database"
    with Pack.open("fix", tmp_root) as pack:
        made = pack.remember(INTENT, OLD).id
        _punish(pack, query, made, times=3)
        other = Pack.open("fix", tmp_root)  # another writer: it learns through the log
        before = other.search(query).items[0]  # the other handle loads its index here
        assert before.id == made and before.ranked_utility < -0.3
        pack.revise(made, response=NEW)
        assert pack.search(query).items[0].ranked_utility == 0.0  # back to the prior
        deadline = time.monotonic() + 5.0
        while other.search(query).items[0].ranked_utility != 0.0:
            assert time.monotonic() < deadline, "the other handle still ranks by old evidence"
            time.sleep(0.2)
        other.close()


def test_bad_revisions_are_refused_and_change_nothing(tmp_root):
    with Pack.open("fix", tmp_root, settings={"max_text_chars": 100}) as pack:
        made = pack.remember(INTENT, OLD, scope="alice").id
        (chunk,) = pack.add_knowledge([KnowledgeChunk("Locks time out after 30 s.", "doc", 0)])
        before = table_versions(pack)
        cases = [
            (UnknownMemory, "no memory 'm_nope'", "m_nope", {"response": NEW}),
            (InvalidInput, "knowledge chunk", chunk, {"response": NEW}),
            (InvalidInput, "Nothing to revise", made, {}),
            (InvalidInput, "polarity must be", made, {"polarity": "meh"}),
            (InvalidInput, "response is empty", made, {"response": "   "}),
            (TextTooLong, "max_text_chars", made, {"response": "x" * 101}),
            (MetadataTooLarge, "keys", made, {"metadata": {str(i): i for i in range(65)}}),
            (InvalidInput, "can't move it", made, {"metadata": {"scope": "bob"}}),
            (InvalidInput, "memory_id must be", "", {"outcome": "x"}),
        ]
        for error, says, memory_id, changes in cases:
            with pytest.raises(error, match=says):
                pack.revise(memory_id, **changes)
        assert pack.revise(made, response=OLD).status == "unchanged"
        assert table_versions(pack) == before
        kept = pack.revise(made, metadata={"team": "ops"})  # the scope stays
        scoped = {"team": "ops", "scope": "alice"}
        assert _pairs(kept.version)["metadata"] == ({"scope": "alice"}, scoped)
    with Pack.open("fix", tmp_root, read_only=True) as reader, pytest.raises(ReadOnlyPack):
        reader.revise(made, response=NEW)


def test_a_pack_made_before_memory_history_opens_and_revises(tmp_root):
    with Pack.open("old", tmp_root) as pack:
        made = pack.remember(INTENT, OLD).id
    cut_back(tmp_root, "old", 2)  # as schema 2 left it (tests/support/old_packs.py)
    with Pack.open("old", tmp_root, read_only=True) as reader:
        assert [v.event for v in reader.history(made)] == ["remember"]
    with Pack.open("old", tmp_root) as pack:
        pack.revise(made, response=NEW)
        assert [v.event for v in pack.history(made)] == ["remember", "revise"]


def test_forgetting_a_revised_memory_erases_its_old_text_too(tmp_root):
    """The old text a revision keeps in ``memory_history`` goes with a forget's purge."""
    marker = "Quokkabyte"
    with Pack.open("fix", tmp_root) as pack:
        made = pack.remember(INTENT, f"Restart the {marker} server.").id
        kept = pack.remember("Lunch order for the team offsite", "Pizza, no anchovies.").id
        pack.revise(made, response=NEW)
        for n in range(12):  # the forgotten row will be under a tenth of one fragment,
            pack.revise(kept, outcome=f"ordered {n}")  # which compaction alone keeps
        assert "memory_history" in " ".join(versions_holding(pack, marker))
        pack.upkeep.maintain()  # one fragment holds every revision: the purge must rewrite it
        report = pack.forget([made], purge=True)
        assert report.removed["memory_history"] == 1
        assert versions_holding(pack, marker) == [] and files_holding(pack, marker) == []
        assert [v.event for v in pack.history(kept)] == ["remember"] + ["revise"] * 12
