"""Scopes: one Pack serves many users without leaking memories between them."""

from __future__ import annotations

import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import InvalidInput
from packs.store import schemas
from tests.support.storage import storage_of

QUESTION = "How do I reset my password?"
ANSWER = "Open the account page and choose reset."


@pytest.fixture
def pack(tmp_root):
    with Pack.open("scopes", str(tmp_root)) as handle:
        handle.add_knowledge([KnowledgeChunk("Passwords are reset on the account page.", "faq", 1)])
        yield handle


def _ids(recall):
    return {item.id for item in recall.items}


def test_a_scope_sees_its_own_memories_and_the_shared_ones_only(pack):
    alice = pack.remember(QUESTION, ANSWER, scope="alice").id
    bob = pack.remember("Where is my invoice?", "Billing, then invoices.", scope="bob").id
    shared = pack.remember("Password reset link expired", "Ask for a new link.").id
    chunk = pack.recall("reset password", k=10, scope="carol").ids
    assert alice not in chunk and bob not in chunk
    assert shared in chunk
    seen_by_alice = _ids(pack.recall("reset my password or find invoice", k=10, scope="alice"))
    assert alice in seen_by_alice and shared in seen_by_alice and bob not in seen_by_alice
    unscoped = _ids(pack.search("reset my password or find invoice", k=10))
    assert unscoped.isdisjoint({alice, bob}) and shared in unscoped


def test_every_row_carries_a_tags_list(pack):
    """The visibility clause has no ``tags IS NULL`` arm (the tags index can't answer it,
    issue 24): a row without metadata must store ``[]``, not NULL, to stay visible."""
    memory = pack.remember("Plain memory", "no metadata").id
    scoped = pack.remember("Plain scoped memory", "in a scope", scope="alice").id
    chunk = pack.add_knowledge([KnowledgeChunk("Plain chunk", "faq", 2)])[0]
    pack.flush()
    assert storage_of(pack).count(schemas.MEMORIES) == 4
    assert storage_of(pack).count(schemas.MEMORIES, "tags IS NULL") == 0
    found = set(pack.search("plain", k=10).ids)
    assert {memory, chunk} <= found and scoped not in found


def test_the_same_words_in_two_scopes_stay_two_memories(pack):
    """A memory id and its near-duplicate search are per scope: Bob's memory must not
    merge into Alice's, or Bob would never see it."""
    alice = pack.remember(QUESTION, ANSWER, scope="alice")
    bob = pack.remember(QUESTION, ANSWER, scope="bob")
    near = pack.remember("How can I reset my password?", ANSWER, scope="bob")
    assert alice.id != bob.id and bob.status == "created"
    assert near.status == "merged" and near.id == bob.id
    assert pack.get(bob.id)["metadata_json"] == '{"scope": "bob"}'


def test_metadata_cannot_write_into_another_scope(pack):
    with pytest.raises(InvalidInput, match="scope"):
        pack.remember(QUESTION, ANSWER, metadata={"scope": "bob"}, scope="alice")
    with pytest.raises(InvalidInput, match="scope"):
        pack.recall("anything", scope="")
