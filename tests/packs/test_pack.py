"""The Pack API end to end on a real LanceDB folder with the real embedder."""

from __future__ import annotations

import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidSettings, PackNotFound, ReadOnlyPack, SchemaVersionError
from packs.store import schemas as S
from tests.support.packs import stored_rows
from tests.support.storage import storage_of


def test_remember_creates_then_merges_a_near_duplicate(pack):
    first = pack.remember("Chased an entry after missing the breakout", "Bought late", "loss")
    assert first.status == "created"
    merged = pack.remember("Chased an entry after missing the breakout!", "Bought late again")
    assert merged.status == "merged" and merged.id == first.id
    assert merged.similarity >= pack.settings.dedup_threshold
    assert pack.count(kind="memory") == 1
    row = pack.get(first.id)
    assert row["merge_count"] == 1
    assert [p["intent_text"] for p in row["provenance"]] == [
        "Chased an entry after missing the breakout",
        "Chased an entry after missing the breakout!",
    ]
    other = pack.remember("Holding a position into earnings", "Halved size")
    assert other.status == "created" and pack.count(kind="memory") == 2


def test_remember_retried_is_a_no_op(pack):
    first = pack.remember("How do I reset my password?", "Use the self-service page")
    again = pack.remember("How do I reset my password?", "Use the self-service page")
    assert again.status == "exists" and again.id == first.id
    assert pack.get(first.id)["merge_count"] == 0


def test_add_knowledge_is_idempotent_and_keeps_learned_state(pack):
    chunks = [
        KnowledgeChunk("Never move a stop further away.", "rules.md", 0),
        KnowledgeChunk("Risk one percent per trade.", "rules.md", 1),
    ]
    ids = pack.add_knowledge(chunks)
    assert ids == pack.add_knowledge(chunks)
    assert pack.count(kind="knowledge") == 2
    recall = pack.recall("should I move my stop further away?", k=1)
    pack.feedback(recall.episode_id, 1.0)
    pack.flush()
    learned = pack.get(recall.ids[0])["utility"]
    assert learned == pytest.approx(0.3)
    pack.add_knowledge(chunks)
    assert pack.get(recall.ids[0])["utility"] == pytest.approx(0.3)
    # new text at the same position replaces text and embedding; learned state stays,
    # so the stored utility still equals the replay of the reward log
    pack.add_knowledge([KnowledgeChunk("Stops only move toward profit.", "rules.md", 0)])
    assert pack.count(kind="knowledge") == 2
    row = pack.get(ids[0])
    assert row["intent_text"] == "Stops only move toward profit." and row["utility"] == 0.3
    assert pack.search("stops move toward profit", k=1).ids == [ids[0]]
    assert pack.rebuild_utilities(write=False).changed == 0


def test_recall_returns_ranked_items_and_prompt(trading_pack):
    recall = trading_pack.recall("I missed the breakout, should I buy now?")
    assert recall.episode_id.startswith("ep_")
    assert 1 <= len(recall.items) <= 3 and recall.candidate_count >= len(recall.items)
    scores = [item.score for item in recall.items]
    assert scores == sorted(scores, reverse=True)
    failure = [i for i in recall.items if i.polarity == "failure"]
    assert failure and failure[0].warning
    assert "WARNING" in recall.prompt and "do not repeat it" in recall.prompt
    knowledge = [i for i in recall.items if i.kind == "knowledge"]
    assert all(i.exploration_bonus == pytest.approx(0.1) for i in knowledge)


def test_recall_logs_episode_and_candidates(trading_pack):
    recall = trading_pack.recall("I missed the breakout, should I buy now?")
    trading_pack.flush()
    (episode,) = stored_rows(trading_pack, S.EPISODES, f"id = '{recall.episode_id}'")
    assert episode["injected_ids"] == recall.ids
    assert len(episode["query_embedding"]) == 384
    logged = stored_rows(trading_pack, S.RETRIEVAL_LOG, f"episode_id = '{recall.episode_id}'")
    assert len(logged) == recall.candidate_count
    assert sorted(r["item_id"] for r in logged if r["injected"]) == sorted(recall.ids)
    top = min((r for r in logged if r["injected"]), key=lambda r: r["final_rank"])
    assert top["item_id"] == recall.ids[0]
    assert top["score"] == pytest.approx(recall.items[0].score)
    assert all(r["similarity"] >= trading_pack.settings.ranking.delta for r in logged)


def test_feedback_moves_every_injected_utility_by_ema(trading_pack):
    recall = trading_pack.recall("I missed the breakout, should I buy now?")
    result = trading_pack.feedback(recall.episode_id, 1.0)
    assert result.applied == len(recall.ids)
    assert all(u == pytest.approx(0.3) for u in result.track_records.values())
    result = trading_pack.feedback(recall.episode_id, -1.0)
    assert all(u == pytest.approx(-0.09) for u in result.track_records.values())
    # visible before any flush, and after it
    for pending in (True, False):
        if not pending:
            trading_pack.flush()
        for memory_id in recall.ids:
            row = trading_pack.get(memory_id)
            assert row["utility"] == pytest.approx(-0.09)
            assert row["reward_count"] == 2 and row["usage_count"] == 1
    events = stored_rows(trading_pack, S.REWARD_EVENTS)
    assert len(events) == 2 * len(recall.ids)
    assert {e["source"] for e in events} == {"explicit"}
    assert sorted(e["q_after"] for e in events)[0] == pytest.approx(-0.09)


def test_feedback_idempotency_key_applies_once(trading_pack):
    recall = trading_pack.recall("earnings tomorrow")
    first = trading_pack.feedback(recall.episode_id, 1.0, idempotency_key="ticket-42")
    trading_pack.flush()
    again = trading_pack.feedback(recall.episode_id, 1.0, idempotency_key="ticket-42")
    assert not first.duplicate and again.duplicate and again.applied == 0
    assert len(stored_rows(trading_pack, S.REWARD_EVENTS)) == len(recall.ids)


def test_feedback_reaches_an_episode_from_an_earlier_session(tmp_path):
    with Pack.open("late", tmp_path) as pack:
        pack.remember("Holding into earnings", "Halved the size")
        episode = pack.recall("earnings tomorrow").episode_id
    with Pack.open("late", tmp_path) as pack:
        result = pack.feedback(episode, 0.5)
        assert result.applied == 1
    with Pack.open("late", tmp_path) as pack:
        (memory_id,) = result.track_records
        assert pack.get(memory_id)["utility"] == pytest.approx(0.15)


def test_feedback_changes_the_ranking(trading_pack):
    query = "I missed the breakout, should I buy now?"
    # k=5: the whole pool above δ, so the punished item stays injected (and punishable)
    # wherever it sinks to
    before = trading_pack.search(query, k=5).ids
    for _ in range(4):  # the top item misleads, every time (item-level credit)
        recall = trading_pack.recall(query, k=5)
        trading_pack.apply_reward(
            recall.episode_id, -1.0, source="explicit", signal="rating", memory_ids=[before[0]]
        )
    after = trading_pack.search(query, k=5).ids
    assert after[0] != before[0] and before[0] in after[1:]
    assert trading_pack.get(before[0])["utility"] < -0.5


def test_metadata_prefilter_and_where(trading_pack):
    hits = trading_pack.search("breakout entry", metadata={"symbol": "NVDA"})
    assert [i.text for i in hits.items] == ["Chased an entry after missing the breakout"]
    hits = trading_pack.search("breakout entry", metadata={"desk": "it's equities"})
    assert len(hits.items) == 1
    hits = trading_pack.search("breakout", where={"source": "playbook.md"}, kind="knowledge")
    assert hits.items and all(i.kind == "knowledge" for i in hits.items)


def test_read_only_handle_searches_but_never_writes(trading_pack, tmp_path):
    trading_pack.flush()
    with Pack.open("test", tmp_path, read_only=True) as reader:
        assert reader.search("breakout").items
        with pytest.raises(ReadOnlyPack):
            reader.recall("breakout")
        with pytest.raises(ReadOnlyPack):
            reader.remember("a", "b")
        with pytest.raises(ReadOnlyPack):
            reader.add_knowledge([KnowledgeChunk("x", "y", 0)])
        with pytest.raises(ReadOnlyPack):
            reader.configure(alpha=0.5)


def test_read_only_or_no_create_never_creates(tmp_path):
    for kwargs in ({"read_only": True}, {"create": False}):
        with pytest.raises(PackNotFound):
            Pack.open("missing", tmp_path, **kwargs)
    assert not (tmp_path / "missing").exists()


def test_settings_are_versioned_with_the_pack(tmp_path):
    with Pack.open("cfg", tmp_path, settings={"alpha": 0.5}) as pack:
        assert pack.settings.rewards.alpha == 0.5 and pack.settings_version == 1
        pack.configure(k2=1)
        assert pack.settings_version == 2
        with pytest.raises(InvalidSettings):
            pack.configure(alpah=1)
    with Pack.open("cfg", tmp_path) as pack:
        settings = pack.settings
        assert (settings.rewards.alpha, settings.ranking.k2, pack.settings_version) == (0.5, 1, 2)
        meta = storage_of(pack).read_meta()
        assert meta["settings@1"]["ranking"]["k2"] == 3
        assert meta["settings@2"]["ranking"]["k2"] == 1


def test_newer_schema_version_is_refused(tmp_path):
    with Pack.open("future", tmp_path) as pack:
        storage_of(pack).write_meta({"schema_version": S.SCHEMA_VERSION + 1})
    with pytest.raises(SchemaVersionError, match="Upgrade Wolfie"):
        Pack.open("future", tmp_path)


def test_two_packs_share_code_not_data(tmp_path):
    with Pack.open("a", tmp_path) as a, Pack.open("b", tmp_path) as b:
        a.remember("alpha intent", "alpha response")
        assert b.count() == 0 and a.count() == 1


def test_close_flushes_everything(tmp_path):
    pack = Pack.open("durable", tmp_path)
    pack.remember("Holding into earnings", "Halved the size")
    recall = pack.recall("earnings")
    pack.feedback(recall.episode_id, 1.0)
    pack.close()
    reopened = Pack.open("durable", tmp_path, read_only=True)
    assert reopened.count(S.EPISODES) == 1 and reopened.count(S.REWARD_EVENTS) == 1
    assert reopened.get(recall.ids[0])["utility"] == pytest.approx(0.3)


def test_regression_a_failed_flush_never_duplicates_rows(trading_pack, monkeypatch):
    """Bug class: a flush whose commit landed but raised (an ambiguous storage failure)
    put its rows back, and the retry appended them a second time."""
    store = storage_of(trading_pack)
    real_append = store.append
    failures = {"reward_events": 1, "retrieval_log": 1}

    def flaky_append(name, data):
        real_append(name, data)  # the commit lands...
        if failures.get(name):
            failures[name] -= 1
            raise OSError("connection reset after the commit")  # ...but the caller sees it fail

    monkeypatch.setattr(store, "append", flaky_append)
    recall = trading_pack.recall("I missed the breakout, should I buy now?")
    trading_pack.feedback(recall.episode_id, 1.0)
    with pytest.raises(OSError):
        trading_pack.flush()  # retrieval_log landed, then "failed": it is kept for a retry
    trading_pack.flush()  # the retry writes by key; reward events go in as well
    assert store.count(S.REWARD_EVENTS) == len(recall.ids)
    assert trading_pack.count(S.EPISODES) == 1
    assert trading_pack.count(S.RETRIEVAL_LOG) == recall.candidate_count
    assert trading_pack.count(S.REWARD_EVENTS) == len(recall.ids)
    assert all(trading_pack.get(i)["utility"] == pytest.approx(0.3) for i in recall.ids)
