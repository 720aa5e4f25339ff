"""The Python-docstring corpus: selectors, and the committed eval set against its corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.evalset import check_known_ids, load_eval_set
from evals.pydoc_corpus import chunks_of, select
from packs.bundles import read_jsonl
from packs.errors import InvalidInput
from packs.store.rows import knowledge_id

PYDOCS = Path(__file__).resolve().parents[2] / "data" / "evals" / "pydocs"


def test_chunks_of_a_module_hold_its_docstring_and_own_callables():
    import fnmatch

    rows = list(chunks_of(fnmatch, "fnmatch"))
    names = {r["name"] for r in rows}
    assert rows[0]["kind"] == "module" and "fnmatch.translate" in names
    assert "fnmatch.functools" not in names  # imported modules are not callables of ours
    assert all(r["text"].startswith(r["name"]) for r in rows if r["kind"] != "module")


def test_select_by_name_and_by_words():
    rows = [
        {
            "source": "py/shutil",
            "position": 0,
            "text": "shutil module\nUtility functions",
            "metadata": {"module": "shutil", "name": "shutil", "kind": "module"},
        },
        {
            "source": "py/shutil",
            "position": 1,
            "text": "shutil.copy2(src, dst)\nCopy data",
            "metadata": {"module": "shutil", "name": "shutil.copy2", "kind": "function"},
        },
    ]
    assert select(rows, "shutil.copy2") == ["py/shutil#1"]
    assert select(rows, "shutil:~utility functions") == ["py/shutil#0"]
    assert select(rows, "shutil:#module") == ["py/shutil#0"]
    with pytest.raises(InvalidInput, match="matches no chunk"):
        select(rows, "shutil.copy3")


def test_committed_eval_set_matches_its_corpus():
    chunks = [obj for _, obj in read_jsonl(PYDOCS / "knowledge.jsonl")]
    loaded = load_eval_set(PYDOCS / "queries.jsonl")
    check_known_ids(loaded, {knowledge_id(c["source"], c["position"]) for c in chunks}, "pydocs")
    assert len(loaded.queries) >= 491 and {q.split for q in loaded.queries} == {"train", "heldout"}
