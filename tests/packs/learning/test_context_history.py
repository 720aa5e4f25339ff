"""The contextual-utility history: weights, intrinsic rewards, eviction (issue 14 §6)."""

from __future__ import annotations

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.learning.context import ContextIndex, history_entry
from packs.learning.kernel import contextual_utility
from packs.settings import ContextSettings
from tests.support.internals import services_of
from tests.support.storage import storage_of

DIM = 4


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


Q = unit(1, 0, 0, 0)
FAR = [unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(0, 0, 0, 1)]  # three distinct topics


def test_reward_weights_count_in_the_kernel():
    """Bug: an implicit signal (weight 0.5) counted as much as an explicit rating."""
    queries = np.stack([Q, Q])
    rewards = np.array([1.0, -1.0])
    # kernel weight at cos 1 with theta 0.8 is 0.2; times the rewards' own weights 1, 0.5
    expected = (0.2 * 1.0 * 1.0 + 0.2 * 0.5 * -1.0 + 0.2 * 0.0) / (0.2 * 1.5 + 0.2)
    got = contextual_utility(Q, queries, rewards, 0.0, 0.8, 0.2, np.array([1.0, 0.5]))
    assert got == pytest.approx(expected)
    assert got != pytest.approx(contextual_utility(Q, queries, rewards, 0.0, 0.8, 0.2))


def test_an_intrinsic_reward_is_weighted_by_its_blend_and_never_marks_helped():
    """Bugs: an intrinsic event counted as a full-weight small reward, and a positive one
    marked its memory as "helped", lifting a hub's prior."""
    assert history_entry(0.1, 1.0, "intrinsic", 0.5) == pytest.approx((0.5, 0.2))
    assert history_entry(-0.6, 0.5, "implicit", -0.6) == pytest.approx((-0.6, 0.5))
    index = ContextIndex(DIM, ContextSettings())
    for far in FAR:  # failed for three distinct queries: a hub
        index.add("hub", far, -1.0)
    index.add("hub", FAR[0], 0.5, 0.2, intrinsic=True)
    assert index.utility("hub", Q, -0.4) == pytest.approx(-0.4)


def test_eviction_keeps_a_hubs_status():
    """Bug: a hub dropped from the bounded index came back with a neutral prior."""
    index = ContextIndex(DIM, ContextSettings(), max_memories=2)
    for far in FAR:
        index.add("hub", far, -1.0)
    index.add("a", Q, 1.0)
    index.add("b", Q, 1.0)  # evicts the hub's history
    assert len(index) == 2
    assert index.utility("hub", Q, -0.4) == pytest.approx(-0.4)


def test_reload_keeps_the_most_recently_rewarded_memories(tmp_root):
    """Bug: after a reload the index evicted the memory rewarded most recently, because
    histories were added grouped by each memory's first reward."""
    with Pack.open("ctx", str(tmp_root)) as pack:
        pack.add_knowledge(
            [
                KnowledgeChunk(t, "doc", i)
                for i, t in enumerate(
                    [
                        "Restart the worker with systemctl.",
                        "Rotate logs weekly.",
                        "Backups run at 2am.",
                    ]
                )
            ]
        )
        ids = {}
        for query in (
            "restart the worker",
            "rotate the logs",
            "when do backups run",
            "restart the worker",
        ):
            found = pack.recall(query, k=1)
            ids[query] = found.ids[0]
            pack.feedback(found.episode_id, 1.0)
    with Pack.open("ctx", str(tmp_root)) as pack:
        learning = services_of(pack).learning
        index = learning.context
        index.max_memories = 2
        learning.sync()
        kept = {m for m in ids.values() if index.evidence(m) is not None}
        assert ids["restart the worker"] in kept  # rewarded last: kept
        assert ids["rotate the logs"] not in kept  # rewarded longest ago: evicted


def test_feedback_reports_what_the_next_recall_sees_and_writes_nothing_early(tmp_root):
    """Issue 21: a reward's result carries U(m|q) at the episode's question after it (what
    the next recall ranks by) beside the global Q. On a handle whose contextual index is
    still cold (a CLI call), working that out must not flush: the buffered rewards join
    the index from memory (bug: feedback flushed mid-batch, so a storage fault test saw
    commits before its flush)."""
    chunks = [
        KnowledgeChunk("Restart the worker with systemctl restart worker.", "ops.md", 0),
        KnowledgeChunk("Rotate the logs with logrotate -f.", "ops.md", 1),
    ]
    question = "how do I restart the worker?"
    with Pack.open("report", str(tmp_root)) as pack:
        pack.add_knowledge(chunks)
        first = pack.recall(question, k=1)
        pack.feedback(first.episode_id, 1.0)  # seen through a loaded index
        second = pack.recall(question, k=1)
    with Pack.open("report", str(tmp_root)) as cold:
        events = storage_of(cold).count("reward_events")
        result = cold.feedback(second.episode_id, 1.0)
        assert storage_of(cold).count("reward_events") == events  # buffered, not flushed
        memory = second.ids[0]
        after = cold.search(question, k=1).items[0]
        assert after.id == memory
        assert result.ranked_utilities[memory] == pytest.approx(after.ranked_utility)
        assert result.track_records[memory] == pytest.approx(after.track_record)
        # U(m|q) at the asked question is not the global Q: it has its own evidence
        assert after.ranked_utility != pytest.approx(after.track_record)
    with Pack.open("report", str(tmp_root), read_only=True) as fresh:  # from the log alone
        assert fresh.search(question, k=1).items[0].ranked_utility == pytest.approx(
            result.ranked_utilities[memory]
        )
