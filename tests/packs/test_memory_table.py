"""The explorer's memory table (packs/memory_table.py): filtered, sorted and paged
without reading every row, and bad input refused."""

from __future__ import annotations

import pytest

from packs import Pack
from packs.errors import InvalidInput
from tests.support.packs import SeededEmbedder


@pytest.fixture
def pack(tmp_path):
    with Pack.open("table", tmp_path, embedder=SeededEmbedder(16)) as pack:  # type: ignore[arg-type]
        for i in range(5):
            pack.remember(f"Deploy step {i} of the release", f"kubectl apply {i}")
        pack.remember("bob's own note", "only bob", metadata={"scope": "bob"})
        yield pack


def test_pages_sorts_and_searches(pack):
    first = pack.memory_table.page(every=True, size=2, sort="age")
    assert (first.total, first.pages, len(first.rows)) == (6, 3, 2)
    seen = [
        r.id for p in (1, 2, 3) for r in pack.memory_table.page(every=True, size=2, page=p).rows
    ]
    assert len(set(seen)) == 6
    found = pack.memory_table.page(every=True, text="deploy STEP 3")
    assert [r.text for r in found.rows] == ["Deploy step 3 of the release"]
    episode = pack.recall("Deploy step 2 of the release", 1)
    pack.feedback(episode.episode_id or "", 1.0)
    top = pack.memory_table.page(every=True, sort="utility").rows[0]
    assert top.id == episode.ids[0] and top.utility > 0
    assert pack.memory_table.page(every=True, sort="uses").rows[0].uses == 1


def test_status_and_scope(pack):
    assert pack.memory_table.page(scope="alice").total == 5  # the shared rows, not bob's
    assert pack.memory_table.page(scope="bob").total == 6
    old = pack.memory_table.page(every=True, text="step 1").rows[0].id
    pack.supersede(old, reason="wrong")
    superseded = pack.memory_table.page(every=True, status="superseded")
    assert [(r.id, r.status) for r in superseded.rows] == [(old, "superseded")]
    assert pack.memory_table.page(every=True, status="current").total == 5
    assert pack.memory_table.page(every=True, status="held").total == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"sort": "size"},
        {"status": "gone"},
        {"kind": "x"},
        {"page": 0},
        {"size": 10_000},
        {"text": "x" * 500},
    ],
)
def test_bad_input_is_refused(pack, bad):
    with pytest.raises(InvalidInput):
        pack.memory_table.page(**bad)
