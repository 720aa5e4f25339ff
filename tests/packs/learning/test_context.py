"""Query-conditioned utility (issue 8): the kernel, the prior, the bounded index, and the
Pack behaviour it buys: learning for one question does not leak into unrelated ones, while
a hub that helps nobody sinks for new questions too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidSettings
from packs.learning.context import ContextIndex, distinct_queries
from packs.learning.kernel import contextual_utility
from packs.learning.strategies import PRIORS
from packs.settings import ContextSettings
from tests.support.internals import services_of

RULE = ContextSettings()  # the shipped defaults (docs/settings.md)


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


# --- pure functions -------------------------------------------------------------------------


def test_kernel_weights_only_queries_closer_than_theta():
    history = np.stack([unit(1, 0, 0), unit(0, 1, 0)])
    rewards = np.array([1.0, -1.0])
    # the query is the first history query: only it weighs (cos 1 - 0.8 = 0.2)
    u = contextual_utility(unit(1, 0, 0), history, rewards, prior=0.0, theta=0.8, kappa=0.2)
    assert u == pytest.approx(0.2 / (0.2 + 0.2))
    # a query unlike both gets the prior alone
    far = contextual_utility(unit(0, 0, 1), history, rewards, prior=-0.4, theta=0.8, kappa=1.0)
    assert far == pytest.approx(-0.4)


def test_thin_evidence_is_shrunk_toward_the_prior():
    history, rewards = np.stack([unit(1, 0.3, 0)]), np.array([1.0])
    query = unit(1, 0, 0)  # cos ~0.958: weight ~0.158
    strong = contextual_utility(query, history, rewards, 0.0, theta=0.8, kappa=0.01)
    weak = contextual_utility(query, history, rewards, 0.0, theta=0.8, kappa=10.0)
    assert strong > 0.9 and 0 < weak < 0.02


@given(
    st.lists(st.floats(-1, 1), min_size=0, max_size=16),
    st.floats(-1, 1),
    st.floats(0.0, 0.99),
    st.floats(1e-3, 100.0),
    st.integers(0, 2**32 - 1),
)
def test_contextual_utility_stays_between_its_evidence_and_prior(
    rewards, prior, theta, kappa, seed
):
    rng = np.random.default_rng(seed)
    history = rng.normal(size=(len(rewards), 8)).astype(np.float32)
    history /= np.linalg.norm(history, axis=1, keepdims=True) + 1e-12
    query = unit(*rng.normal(size=8))
    u = contextual_utility(query, history, np.array(rewards), prior, theta, kappa)
    values = [*rewards, prior]
    assert np.isfinite(u)
    assert min(values) - 1e-6 <= u <= max(values) + 1e-6


def test_priors():
    assert PRIORS["global"](0.7, helped=True, broad=True) == 0.7
    assert PRIORS["negative"](0.7, helped=False, broad=True) == 0.0
    assert PRIORS["negative"](-0.5, helped=True, broad=True) == -0.5
    # never-helped: only a memory that never helped and failed broadly carries its Q
    assert PRIORS["never-helped"](-0.5, helped=False, broad=True) == -0.5
    assert PRIORS["never-helped"](-0.5, helped=False, broad=False) == 0.0
    assert PRIORS["never-helped"](-0.5, helped=True, broad=True) == 0.0


def test_distinct_queries_counts_near_duplicates_once():
    a, b = unit(1, 0, 0), unit(0, 1, 0)
    near_a = unit(1, 0.05, 0)  # cos ~0.999 with a
    assert distinct_queries(np.stack([a, near_a, a, b]), RULE.distinct_cos) == 2
    assert distinct_queries(np.zeros((0, 3)), RULE.distinct_cos) == 0


def test_index_is_bounded_per_memory_and_in_memories():
    index = ContextIndex(3, RULE.replace(history=4), max_memories=2)
    for i in range(10):
        index.add("m1", unit(1, i, 0), -1.0)
    kept = index.evidence("m1")
    assert kept is not None and kept[1].shape == (4,)  # the rewards kept
    index.add("m2", unit(0, 1, 0), 1.0)
    index.add("m3", unit(0, 0, 1), 1.0)
    assert len(index) == 2 and index.evidence("m1") is None  # least recently touched dropped


def test_a_broad_never_helped_memory_carries_its_negative_q_to_new_queries():
    index = ContextIndex(3, RULE.replace(kappa=1.0))
    new_query = unit(1, 1, 1)
    hub_queries = [unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)][: RULE.hub_distinct_queries]
    for i, query in enumerate(hub_queries):
        index.add("hub", query, -1.0)
        index.add("narrow", unit(1, 0.01 * i, 0), -1.0)  # fails for one question only
    assert index.utility("hub", new_query, -0.6) == pytest.approx(-0.6)
    assert index.utility("narrow", new_query, -0.6) == 0.0
    index.add("hub", unit(1, 0, 0), 1.0)  # it helped once: judged near its history only
    assert index.utility("hub", new_query, -0.3) == 0.0


def test_settings_are_validated():
    with pytest.raises(InvalidSettings, match=r"context\.prior: must be one of never-helped"):
        Pack.open("p", "/nonexistent-never-created", settings={"context_prior": "always"})
    with pytest.raises(InvalidSettings, match=r"context\.mode"):
        Pack.open("p", "/nonexistent-never-created", settings={"utility_mode": "magic"})


# --- through the Pack -----------------------------------------------------------------------

CHUNKS = [
    "To set a timeout on HTTP requests, pass timeout=5 to requests.get.",
    "Retry failed HTTP requests with urllib3's Retry and an HTTPAdapter.",
    "Compress a directory into a tar.gz archive with tar -czf out.tar.gz dir/.",
    "List the files of a tar archive without extracting them: tar -tf archive.tar.",
    "See the documentation index for more information about commands and options.",
]
TIMEOUT_Q = "how do I make an http request give up after five seconds"
RETRY_Q = "how do I retry a failed http request automatically"
PARAPHRASE = "make an http request give up after five seconds, how?"
HUB_QUERIES = [  # three unrelated questions (pairwise cos < 0.2) the hub resembles
    "more information about http request options",
    "documentation index of all commands",
    "which command options exist for compression",
]


def train_pack(path, mode: str) -> tuple[Pack, dict[str, str]]:
    pack = Pack.open("ctx", path / mode, settings={"utility_mode": mode, "k2": 1})
    pack.add_knowledge([KnowledgeChunk(text, "docs.md", i) for i, text in enumerate(CHUNKS)])
    ids = {hit.text: hit.id for hit in pack.search(TIMEOUT_Q, k=len(CHUNKS)).items}
    for _ in range(3):
        recall = pack.recall(TIMEOUT_Q)
        pack.feedback(recall.episode_id or "", 1.0 if recall.ids == [ids[CHUNKS[0]]] else -1.0)
    return pack, ids


def candidate(pack: Pack, query: str, text: str):
    return next(item for item in pack.search(query, k=len(CHUNKS)).items if item.text == text)


def test_reward_for_one_question_does_not_leak_into_an_unrelated_one(tmp_path):
    contextual, _ = train_pack(tmp_path, "contextual")
    plain, _ = train_pack(tmp_path, "global")
    with contextual, plain:
        for pack in (contextual, plain):
            assert candidate(pack, TIMEOUT_Q, CHUNKS[0]).track_record > 0.5  # global Q learned
        # plain MemRL: the timeout chunk's Q pushes it above the retry chunk
        assert plain.search(RETRY_Q).items[0].text == CHUNKS[0]
        # contextual: seen from the retry question the timeout chunk has no credit
        assert contextual.search(RETRY_Q).items[0].text == CHUNKS[1]
        assert candidate(contextual, RETRY_Q, CHUNKS[0]).ranked_utility == 0.0
        # and from a paraphrase of the question it was rewarded for, it keeps its credit
        assert candidate(contextual, PARAPHRASE, CHUNKS[0]).ranked_utility > 0.3


def test_a_hub_that_helps_nobody_sinks_for_new_questions(tmp_path):
    with Pack.open("hub", tmp_path, settings={"k2": 1, "explore_bonus": 0.0}) as pack:
        pack.add_knowledge([KnowledgeChunk(text, "docs.md", i) for i, text in enumerate(CHUNKS)])
        hub, new_question = CHUNKS[4], "where is the documentation for the tar command options"
        untrained = [i.text for i in pack.search(new_question, k=len(CHUNKS)).items]
        for query in HUB_QUERIES:
            recall = pack.search(query, k=len(CHUNKS))
            ids = [item.id for item in recall.items if item.text == hub]
            episode = pack.recall(query, k=len(CHUNKS)).episode_id or ""
            pack.apply_reward(episode, -1.0, source="explicit", signal="item", memory_ids=ids)
        item = candidate(pack, new_question, hub)
        assert item.track_record < 0 and item.ranked_utility <= item.track_record + 1e-9
        trained = [i.text for i in pack.search(new_question, k=len(CHUNKS)).items]
        assert untrained.index(hub) == 0 < trained.index(hub)  # it no longer wins there


def test_contextual_state_is_rebuilt_from_the_log_in_a_new_handle(tmp_path):
    pack, _ = train_pack(tmp_path, "contextual")
    with pack:
        expected = candidate(pack, PARAPHRASE, CHUNKS[0]).ranked_utility
    with Pack.open("ctx", tmp_path / "contextual", read_only=True) as reader:
        assert candidate(reader, PARAPHRASE, CHUNKS[0]).ranked_utility == pytest.approx(
            expected, abs=1e-3
        )


def test_a_settings_change_reaches_the_history_bound(tmp_path):
    with Pack.open("bound", tmp_path, settings={"k2": 1}) as pack:
        pack.add_knowledge([KnowledgeChunk(text, "docs.md", i) for i, text in enumerate(CHUNKS)])
        pack.configure(context_history=2)
        pack.search(TIMEOUT_Q)  # loads the (empty) index
        for _ in range(4):
            recall = pack.recall(TIMEOUT_Q)
            pack.feedback(recall.episode_id or "", 1.0)
        kept = services_of(pack).learning.context.evidence(recall.ids[0])
        assert kept is not None and kept[1].shape == (2,)  # the rewards kept


def test_confidence_counts_only_as_far_as_the_evidence_is_near_the_query():
    """A track record earned on other questions neither vouches for a memory nor sinks it
    here: Phase B blends confidence times the share of U that is local evidence."""
    from packs.learning.ema import LearnedState
    from packs.recall.phases import Candidates, phase_b
    from packs.settings import PackSettings

    index = ContextIndex(3, RULE)
    asked, elsewhere = unit(1, 0, 0), unit(0, 1, 0)
    for _ in range(4):
        index.add("confident", asked, -1.0)
    assert index.assess("confident", elsewhere, -0.7) == (0.0, 0.0)
    utility, share = index.assess("confident", asked, -0.7)
    assert share == pytest.approx(0.8 / 1.0) and utility < -0.7

    names = ["fresh", "confident"]  # equal similarity: Phase A order breaks the tie
    empty = (
        "intent_text",
        "response_summary",
        "experience_summary",
        "signal_polarity",
        "source",
        "title",
        "start_s",
        "end_s",
    )
    columns: dict[str, list] = {c: [None, None] for c in empty}
    columns.update(
        id=names,
        kind=["memory", "memory"],
        utility=[0.0, -0.7],
        confidence=[0.0, 0.9],
        usage_count=[0, 4],
        reward_count=[0, 4],
    )
    pool = Candidates(columns, np.array([0.6, 0.6]))

    class View:  # what LearningState.view gives recall, over this index alone
        contextual = True

        def __init__(self, query: np.ndarray) -> None:
            self.query = query

        def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
            return stored, 0

        def assess(self, memory_id: str, q: float) -> tuple[float, float]:
            return index.assess(memory_id, self.query, q)

    settings = PackSettings(explore_bonus=0.0)
    far = phase_b(pool, View(elsewhere), settings.ranking, 2)
    assert [i.id for i in far.items] == names and far.items[1].confidence == 0.9
    assert [row["z_confidence"] for row in far.log_rows] == [0.0, 0.0]
    near = phase_b(pool, View(asked), settings.ranking, 2)
    assert [i.id for i in near.items] == ["fresh", "confident"]  # its failures sink it here
    assert near.log_rows[1]["z_confidence"] > 0
