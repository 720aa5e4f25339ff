"""Eval sets stored with the Pack (``eval_sets`` table), and bundles that carry one."""

from __future__ import annotations

import json

import pytest

from packs import Pack
from packs.bundles import load_bundle
from packs.errors import InvalidInput
from packs.eval_sets import EvalSetNotFound
from packs.records import KnowledgeChunk

LINE = '{"id": "q1", "query": "copy a file", "relevant": ["man/cp.1#0"]}\n'


def check_store_and_replace(pack: Pack) -> None:
    assert pack.eval_sets.stored() == []
    first = pack.eval_sets.save("smoke", LINE, "smoke.jsonl")
    assert pack.eval_sets.read().jsonl == LINE and pack.eval_sets.read("smoke") == first
    pack.eval_sets.save("smoke", LINE + LINE.replace("q1", "q2"), "smoke.jsonl")
    pack.eval_sets.save("other", LINE)
    assert [s.name for s in pack.eval_sets.stored()] == ["other", "smoke"]
    assert pack.eval_sets.read("smoke").jsonl.count("\n") == 2  # replaced, not appended
    with pytest.raises(EvalSetNotFound, match="stores 2 eval sets"):
        pack.eval_sets.read()


def test_store_read_and_replace_on_a_local_folder(tmp_root):
    with Pack.open("p", tmp_root) as pack:
        check_store_and_replace(pack)
    with Pack.open("p", tmp_root, read_only=True) as reader:
        assert reader.eval_sets.read("other").jsonl == LINE


@pytest.mark.s3
def test_store_read_and_replace_on_s3(s3):
    with Pack.open("p", s3.fresh_root("evalsets"), storage_options=s3.storage_options) as pack:
        check_store_and_replace(pack)


def test_missing_eval_set_says_how_to_fix_it(tmp_root):
    with Pack.open("p", tmp_root) as pack:
        with pytest.raises(EvalSetNotFound, match=r"stores no eval set.*eval_set\.jsonl"):
            pack.eval_sets.read()
        pack.eval_sets.save("smoke", LINE)
        with pytest.raises(EvalSetNotFound, match="no eval set 'nope'; it stores smoke"):
            pack.eval_sets.read("nope")
        with pytest.raises(InvalidInput):
            pack.eval_sets.save(" ", LINE)


def test_bundle_stores_its_eval_set_with_memory_ids_resolved(tmp_path, tmp_root):
    folder = tmp_path / "journal"
    folder.mkdir()
    chunk = {"source": "book.md", "position": 0, "text": "Never widen a stop."}
    memory = {"intent": "Wanted to give the trade more room", "response": "Moved the stop"}
    relevant = {"book.md#0": 2, "memory:Wanted to give the trade more room": 1}
    query = {"id": "stop", "query": "widen my stop?", "relevant": relevant}
    for name, row in (("knowledge", chunk), ("memories", memory), ("eval_set", query)):
        (folder / f"{name}.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with Pack.open("p", tmp_root) as pack:
        loaded = load_bundle(pack, folder)
        stored = pack.eval_sets.read()
    memory_id = loaded.refs["memory:Wanted to give the trade more room"]
    assert loaded.eval_set == stored.name == "journal"
    assert json.loads(stored.jsonl)["relevant"] == {"book.md#0": 2, memory_id: 1}
    assert stored.source == str(folder / "eval_set.jsonl")


def test_bundle_eval_set_naming_an_unknown_memory_is_refused(tmp_path, tmp_root):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "eval_set.jsonl").write_text(
        '{"query": "q", "relevant": ["memory:no such intent"]}\n', encoding="utf-8"
    )
    with Pack.open("p", tmp_root) as pack:
        pack.add_knowledge([KnowledgeChunk(source="s", position=0, text="t")])
        with pytest.raises(InvalidInput, match=r"eval_set.jsonl:1: 'memory:no such intent'"):
            load_bundle(pack, folder)
