"""Associative links: a past query a memory helped with becomes a retrieval key for it
(packs/learning/context.py ``ContextIndex.linked``, Phase A in packs/recall/phases.py)."""

from __future__ import annotations

import numpy as np
import pytest

from packs import KnowledgeChunk, Pack
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.learning.context import ContextIndex
from packs.recall.candidates import RecallQuery
from packs.recall.phases import phase_a
from packs.settings import ContextSettings
from packs.store import schemas
from tests.support.storage import storage_of

DIM = 8


def unit(*parts: tuple[int, float]) -> np.ndarray:
    """A unit vector with ``cos`` weight on axis ``i`` for each (i, cos), the rest on axis 7."""
    v = np.zeros(DIM, dtype=np.float32)
    for axis, weight in parts:
        v[axis] = weight
    v[7] = np.sqrt(max(0.0, 1.0 - float(v @ v)))
    return v


# The geometry, by construction (cosines to the question on axis 0):
QUESTION = "how do I restart the worker"  # the question played and rewarded
ANSWER = "systemctl restart wolfie-worker"  # helps; similarity 0.40 to the question
DECOY = "workers pick flow runs from the queue"  # nearest (0.70), never helps
REWORDING = "bounce the worker daemon"  # cos 0.85 to the question: a paraphrase
UNRELATED = "which port does the UI listen on"  # cos 0.30 to the question
VECTORS = {
    QUESTION: unit((0, 1.0)),
    ANSWER: unit((0, 0.40), (2, 0.9)),
    DECOY: unit((0, 0.70), (1, 0.7)),
    REWORDING: unit((0, 0.85), (3, 0.5)),
    UNRELATED: unit((0, 0.30), (4, 0.9)),
}


class TableEmbedder(EmbeddingProvider):
    """Fixed vectors per text: the test sets every cosine it relies on."""

    info = EmbeddingInfo("table", "table", "test:table", DIM)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        return np.stack([VECTORS[t] for t in texts]).astype(np.float32)


def taught_pack(root: object) -> tuple[Pack, str, str]:
    """A Pack where ANSWER helped QUESTION three times and DECOY failed it three times;
    the Pack and the two chunks' ids. Cosine only: the geometry is set by the vectors,
    and the words ("worker", "workers") would add BM25's own choice to the pool."""
    settings = {"k1": 2, "k2": 2, "lexical": "off"}
    pack = Pack.open("links", root, embedder=TableEmbedder(), settings=settings)  # type: ignore[arg-type]
    answer, decoy = pack.add_knowledge(
        [KnowledgeChunk(ANSWER, "answer.md", 0), KnowledgeChunk(DECOY, "decoy.md", 0)]
    )
    for _ in range(3):
        episode = pack.recall(QUESTION).episode_id
        assert episode is not None
        pack.apply_reward(episode, 1.0, source="explicit", signal="rating", memory_ids=[answer])
        pack.apply_reward(episode, -1.0, source="explicit", signal="rating", memory_ids=[decoy])
    pack.configure(k1=1, k2=1)  # Phase A alone returns only the nearest chunk
    return pack, answer, decoy


def test_a_rewording_finds_the_memory_that_helped_the_original(tmp_path):
    pack, answer, decoy = taught_pack(tmp_path)
    with pack:
        found = pack.search(REWORDING)
        assert found.ids == [answer]  # its own similarity (0.34) is far below the decoy's
        own = float(VECTORS[REWORDING] @ VECTORS[ANSWER])  # 0.37
        assert found.items[0].similarity == pytest.approx(own, abs=1e-3)  # shown as is
        assert found.candidate_count == 2  # the link brought it into the pool
        pack.configure(context_links=0)
        assert pack.search(REWORDING).ids == [decoy]  # without links: similarity's choice


def test_an_unrelated_question_ranks_as_if_nothing_was_learned(tmp_path):
    pack, _, _ = taught_pack(tmp_path)
    with pack:
        linked = pack.search(UNRELATED, k=1)
        pack.configure(context_links=0)
        plain = pack.search(UNRELATED, k=1)
        assert (linked.ids, linked.candidate_count) == (plain.ids, plain.candidate_count)


def test_failures_for_the_same_wording_withdraw_the_key(tmp_path):
    pack, answer, decoy = taught_pack(tmp_path)
    with pack:
        pack.configure(k1=2, k2=2)
        for _ in range(4):  # the answer stops helping (the docs changed)
            episode = pack.recall(QUESTION).episode_id
            assert episode is not None
            pack.apply_reward(
                episode, -1.0, source="explicit", signal="rating", memory_ids=[answer]
            )
        pack.configure(k1=1, k2=1)
        assert pack.search(REWORDING).ids == [decoy]


def test_filters_and_scopes_still_bind_a_linked_memory(tmp_path):
    pack, _, decoy = taught_pack(tmp_path)
    with pack:
        found = pack.search(REWORDING, where={"source": "decoy.md"})
        assert (found.ids, found.candidate_count) == ([decoy], 1)


def test_lancedb_phase_a_adds_linked_memories_too(tmp_path):
    """Without the vector cache (a pinned table, or too many rows to hold) Phase A asks
    LanceDB for the linked rows, filter included."""
    pack, answer, decoy = taught_pack(tmp_path)
    with pack:
        store, vector = storage_of(pack), VECTORS[REWORDING]
        plain = phase_a(store, RecallQuery(vector, 1, 0.25))
        assert plain.ids == [decoy] and plain.ranked_similarity is None
        linked = phase_a(store, RecallQuery(vector, 1, 0.25, links={answer: 0.70}))
        assert linked.ids == [decoy, answer]
        own = [float(vector @ VECTORS[DECOY]), float(vector @ VECTORS[ANSWER])]
        np.testing.assert_allclose(linked.similarity, own, atol=1e-3)
        np.testing.assert_allclose(linked.ranking_similarity, [own[0], 0.70], atol=1e-3)
        clause = f"source = 'decoy.md' AND kind = '{schemas.KIND_KNOWLEDGE}'"
        assert phase_a(store, RecallQuery(vector, 1, 0.25, clause, links={answer: 0.70})).ids == [
            decoy
        ]
        low = phase_a(store, RecallQuery(vector, 1, 0.25, links={answer: 0.5}))
        assert low.ids == [decoy]  # a key below the pool's cut adds nothing


def test_keys_need_a_vouching_reward_that_still_holds_for_its_wording():
    index = ContextIndex(DIM, ContextSettings(theta=0.8, kappa=0.2, link_margin=0.15, links=3))
    question, rewording = VECTORS[QUESTION], VECTORS[REWORDING]
    index.add("helped", question, 1.0)
    index.add("nudged", question, 1.0, weight=0.2, intrinsic=True)  # can't vouch alone
    index.add("flipped", question, 1.0)
    index.add("flipped", question, -1.0)
    index.add("flipped", question, -1.0)  # a lucky reward, outvoted
    index.add("tied", question, 1.0)
    index.add("tied", question, -1.0)  # one each way: no support
    links = index.linked(rewording)
    assert links == pytest.approx({"helped": 0.70}, abs=1e-3)  # cos 0.85 - margin
    index.use_rule(index.rule.replace(links=0))
    assert index.linked(rewording) == {}
    index.use_rule(index.rule.replace(links=3))
    index.add("helped", question, -1.0)
    index.add("helped", question, -1.0)
    assert index.linked(rewording) == {}


def test_link_keys_match_a_brute_force_scan_through_updates_and_compaction():
    """Replacing a memory's keys marks its old rows dead and appends; compaction keeps
    the answers: always the best live key per memory."""
    from packs.learning.links import LinkKeys

    rng = np.random.default_rng(7)
    keys = LinkKeys(DIM)
    truth: dict[str, np.ndarray] = {}
    for step in range(3_000):
        memory = f"m{rng.integers(200)}"
        count = int(rng.integers(0, 4))
        vectors = rng.standard_normal((count, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        keys.put(memory, vectors, np.ones(count))
        truth[memory] = vectors
        if step % 500 == 0:
            keys.drop([memory])
            truth[memory] = vectors[:0]
    assert len(keys) == sum(len(v) for v in truth.values())
    query = unit((0, 0.6), (1, 0.8))
    best = {m: float((v @ query).max()) for m, v in truth.items() if len(v)}
    expected = sorted(best, key=lambda m: -best[m])[:5]
    found = keys.nearest(query, 0.1, 5)
    assert list(found) == expected
    assert found == pytest.approx({m: best[m] - 0.1 for m in expected})


def test_among_equal_keys_the_better_supported_memory_comes_first():
    from packs.learning.links import LinkKeys

    keys = LinkKeys(DIM)
    question = VECTORS[QUESTION][None, :]
    keys.put("shown along", question, np.array([0.1]))
    keys.put("kept helping", question, np.array([0.8]))
    assert list(keys.nearest(VECTORS[REWORDING], 0.15, 1)) == ["kept helping"]


# Names (issue 20): a question about one person must not borrow what helped a question
# about another, however alike the two embed.
ABOUT_GRACE = "how long did the doctor tell Grace to rest"
GRACE_TURN = "Grace: six weeks of rest, says the doctor"
OTHER_TURN = "the weather was lovely on the coast"
AGAIN_GRACE = "how many weeks did Grace have to rest"
ABOUT_MELANIE = "how long did the doctor tell Melanie to rest"
VECTORS.update(
    {
        ABOUT_GRACE: unit((0, 1.0)),
        GRACE_TURN: unit((0, 0.40), (2, 0.9)),
        OTHER_TURN: unit((0, 0.70), (1, 0.7)),
        AGAIN_GRACE: unit((0, 0.85), (3, 0.5)),
        ABOUT_MELANIE: unit((0, 0.85), (4, 0.5)),  # as near as AGAIN_GRACE, in embedding space
    }
)


def test_a_link_does_not_carry_one_persons_answer_to_a_question_about_another(tmp_path):
    with Pack.open(
        "names",
        tmp_path,
        embedder=TableEmbedder(),  # type: ignore[arg-type]
        settings={"k1": 2, "k2": 2, "lexical": "off"},
    ) as pack:
        turn, other = pack.add_knowledge(
            [KnowledgeChunk(GRACE_TURN, "chat", 0), KnowledgeChunk(OTHER_TURN, "chat", 1)]
        )
        for _ in range(3):
            episode = pack.recall(ABOUT_GRACE).episode_id or ""
            pack.apply_reward(episode, 1.0, source="explicit", signal="rating", memory_ids=[turn])
            pack.apply_reward(episode, -1.0, source="explicit", signal="rating", memory_ids=[other])
        pack.configure(k1=1, k2=1)
        assert pack.search(AGAIN_GRACE).ids == [turn]  # the link: Grace asked again
        found = pack.search(ABOUT_MELANIE)
        assert found.ids == [other] and found.candidate_count == 2  # fetched, not lifted
