"""Issue 32: a Pack as a LangChain and a LlamaIndex retriever, with the real libraries
(langchain-core, llama-index-core), used through their own public entry points."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever as LangChainRetriever
from langchain_core.runnables import RunnableLambda
from llama_index.core.retrievers import BaseRetriever as LlamaRetriever
from llama_index.core.schema import NodeWithScore

from packs import Pack
from packs.errors import InvalidInput, UnknownEpisode
from wolfie.integrations import langchain as wolfie_langchain
from wolfie.integrations import llama_index as wolfie_llama

QUERY = "missed the breakout, should I chase it?"


@pytest.fixture
def journal(tmp_path: Path) -> tuple[str, dict[str, str]]:
    with Pack.open("journal", tmp_path) as pack:
        ids = {
            "chase": pack.remember(
                "Chased a breakout I missed", "Bought the high, -1R", polarity="failure"
            ).id,
            "retest": pack.remember(
                "Missed a breakout and waited", "Bought the retest, +2R", polarity="success"
            ).id,
            "alice": pack.remember(
                "Missed the breakout again", "Alice's own rule", scope="alice"
            ).id,
        }
    return str(tmp_path), ids


def test_the_langchain_retriever_returns_documents_with_the_episode(journal):
    root, ids = journal
    retriever = wolfie_langchain.WolfieRetriever(pack="journal", root=root, k=2)
    assert isinstance(retriever, LangChainRetriever)
    docs = retriever.invoke(QUERY)
    assert len(docs) == 2 and all(isinstance(d, Document) for d in docs)
    assert {d.id for d in docs} == {ids["chase"], ids["retest"]}  # alice's is scoped
    episode = docs[0].metadata["episode_id"]
    assert episode.startswith("ep_") and {d.metadata["episode_id"] for d in docs} == {episode}
    for doc in docs:
        assert {"id", "kind", "score", "track_record", "ranked_utility"} <= set(doc.metadata)
        assert doc.metadata["kind"] == "memory" and doc.metadata["track_record"] == 0.0
    retest = next(d for d in docs if d.id == ids["retest"])
    assert retest.page_content == "Missed a breakout and waited\n\nBought the retest, +2R"
    rewarded = retriever.feedback(docs, 1.0)
    assert rewarded.episode_id == episode and rewarded.applied == 2
    chain = retriever | RunnableLambda(
        lambda found: {d.id: d.metadata["track_record"] for d in found}
    )
    assert chain.invoke(QUERY)[ids["retest"]] == pytest.approx(
        rewarded.track_records[ids["retest"]]
    )
    with pytest.raises(InvalidInput, match="one logged recall"):
        retriever.feedback([Document(page_content="x")], 1.0)


def test_a_scoped_search_only_retriever_logs_nothing(journal):
    root, ids = journal
    retriever = wolfie_langchain.WolfieRetriever(
        pack="journal", root=root, scope="alice", log=False
    )
    docs = retriever.invoke(QUERY)
    assert ids["alice"] in {d.id for d in docs}
    assert {d.metadata.get("episode_id") for d in docs} == {None}
    with Pack.open("journal", root, read_only=True) as pack:
        assert pack.count("episodes") == 0


def test_the_llama_index_retriever_returns_scored_nodes_with_the_episode(journal):
    root, ids = journal
    with Pack.open("journal", root) as pack:
        retriever = wolfie_llama.WolfieRetriever(pack, k=2)
        assert isinstance(retriever, LlamaRetriever)
        nodes = retriever.retrieve(QUERY)
        assert len(nodes) == 2 and all(isinstance(n, NodeWithScore) for n in nodes)
        assert {n.node.node_id for n in nodes} == {ids["chase"], ids["retest"]}
        assert nodes[0].score >= nodes[1].score
        episode = nodes[0].node.metadata["episode_id"]
        assert {n.node.metadata["episode_id"] for n in nodes} == {episode}
        rewarded = retriever.feedback(nodes, -1.0)
        assert rewarded.applied == 2 and all(q < 0 for q in rewarded.track_records.values())
        again = retriever.retrieve(QUERY)
        assert all(n.node.metadata["track_record"] < 0 for n in again)


def test_a_scoped_retriever_rewards_only_its_scopes_episodes(journal):
    """Bug (issue 42): built with scope="alice", both retrievers rewarded Bob's episode
    when given its id, or a forged result's metadata naming it."""
    root, _ids = journal
    with Pack.open("journal", root) as pack:
        bobs = pack.recall(QUERY, scope="bob").episode_id or ""
        pack.flush()
        forged = [Document(page_content="x", metadata={"episode_id": bobs})]
        langchain = wolfie_langchain.WolfieRetriever(pack=pack, scope="alice")
        llama = wolfie_llama.WolfieRetriever(pack, scope="alice")
        for attempt in (
            lambda: langchain.feedback(bobs, -1.0),
            lambda: langchain.feedback(forged, -1.0),
            lambda: llama.feedback(bobs, -1.0),
        ):
            with pytest.raises(UnknownEpisode, match="scope 'alice'"):
                attempt()
        assert pack.query("rewards").height == 0  # Bob's memories untouched
        own = langchain.invoke(QUERY)
        assert langchain.feedback(own, 1.0).applied == len(own)  # its own episode


def test_the_calls_k_wins_over_the_built_k(journal):
    root, _ids = journal
    retriever = wolfie_langchain.WolfieRetriever(pack="journal", root=root, k=2)
    assert len(retriever.invoke(QUERY, k=1)) == 1
    assert len(retriever.invoke(QUERY)) == 2
