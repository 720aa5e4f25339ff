"""Eval set loading: the JSONL format, and one clear, line-numbered error per bad input."""

from __future__ import annotations

import json

import pytest

from evals.evalset import check_known_ids, drop_ambiguous, load_eval_set, row_id
from packs.errors import InvalidInput
from packs.store.rows import knowledge_id


def write(tmp_path, lines):
    path = tmp_path / "set.jsonl"
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
        encoding="utf-8",
    )
    return path


def test_loads_ids_grades_contexts_and_splits(tmp_path):
    path = write(
        tmp_path,
        [
            {"id": "a", "query": " copy a tree ", "relevant": ["man/cp.1#18"], "split": "train"},
            "",
            {"query": "graded", "relevant": {"man/cp.1#1": 2, "k_abc": 1}, "split": "heldout"},
            {"query": "texts only", "reference_contexts": ["copy directories recursively"]},
        ],
    )
    loaded = load_eval_set(path)
    first, graded, texts = loaded.queries
    assert (loaded.name, len(loaded.digest)) == ("set", 64)
    assert (first.id, first.query, first.relevant, first.line) == (
        "a",
        "copy a tree",
        {"man/cp.1#18": 1},
        1,
    )
    assert graded.id == "line-3" and graded.relevant == {"man/cp.1#1": 2, "k_abc": 1}
    assert texts.relevant == {} and texts.reference_contexts == ("copy directories recursively",)
    assert [q.id for q in loaded.split("heldout")] == ["line-3"]


def test_row_id_maps_source_position_refs_and_keeps_row_ids():
    assert row_id("man/cp.1#18") == knowledge_id("man/cp.1", 18)
    assert row_id("k_0123") == "k_0123"
    assert row_id("notes#draft") == "notes#draft"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"set.jsonl:2: not valid JSON"),
        ("[1, 2]", r"set.jsonl:2: expected a JSON object"),
        ({"query": "  ", "relevant": ["x"]}, r"set.jsonl:2: 'query' must be a non-empty"),
        ({"relevant": ["x"]}, r"set.jsonl:2: 'query' must be a non-empty"),
        ({"query": "q"}, r"set.jsonl:2: query 'line-2' has no 'relevant' ids"),
        ({"query": "q", "relevant": {"x": 0}}, r"set.jsonl:2: grade of 'x' must be an int >= 1"),
        ({"query": "q", "relevant": "x"}, r"set.jsonl:2: 'relevant' must be a list"),
        ({"query": "q", "relevant": ["x"], "split": "test"}, r"set.jsonl:2: 'split' must be"),
        ({"query": "q", "relevant": ["x"], "relevance": 1}, r"set.jsonl:2: unknown key"),
        ({"id": "a", "query": "q", "relevant": ["x"]}, r"set.jsonl:2: query id 'a' repeats line 1"),
        ({"query": "q", "reference_contexts": [""]}, r"set.jsonl:2: 'reference_contexts' must"),
    ],
)
def test_bad_lines_are_refused_with_their_line_number(tmp_path, line, message):
    path = write(tmp_path, [{"id": "a", "query": "fine", "relevant": ["x"]}, line])
    with pytest.raises(InvalidInput, match=message):
        load_eval_set(path)


def test_missing_and_empty_files_are_refused(tmp_path):
    with pytest.raises(InvalidInput, match="does not exist"):
        load_eval_set(tmp_path / "nope.jsonl")
    with pytest.raises(InvalidInput, match="no queries found"):
        load_eval_set(write(tmp_path, [""]))


def test_unknown_ids_are_listed_by_line(tmp_path):
    known = {knowledge_id("man/cp.1", 1), "k_real"}
    path = write(
        tmp_path,
        [
            {"id": "ok", "query": "q1", "relevant": ["man/cp.1#1", "k_real"]},
            {"id": "typo", "query": "q2", "relevant": ["man/cp.1#99", "k_real"]},
            {"id": "stale", "query": "q3", "relevant": ["k_gone"]},
        ],
    )
    with pytest.raises(InvalidInput) as caught:
        check_known_ids(load_eval_set(path), known, "Pack 'docs'")
    text = str(caught.value)
    assert "2 line(s) name ids that Pack 'docs' does not hold" in text
    assert "line 2 (typo): ['man/cp.1#99']" in text and "line 3 (stale): ['k_gone']" in text
    assert "line 1" not in text


def test_committed_eval_set_loads_and_matches_its_corpus():
    """The committed man-page eval set: every id is a chunk of the committed corpus."""
    from pathlib import Path

    from packs.bundles import read_jsonl

    folder = Path(__file__).resolve().parents[2] / "data" / "evals" / "manpages"
    loaded = load_eval_set(folder / "queries.jsonl")
    chunks = [obj for _, obj in read_jsonl(folder / "knowledge.jsonl")]
    check_known_ids(loaded, {knowledge_id(c["source"], c["position"]) for c in chunks}, "corpus")
    assert len(loaded.queries) >= 503
    assert {q.split for q in loaded.queries} == {"train", "heldout"}


def test_drop_ambiguous_removes_alike_wordings_and_their_paraphrases():
    """Lines worded alike (case and spacing aside) with other evidence go, with a reason;
    alike wordings with the same evidence, and every other line, stay."""
    questions = [
        {"id": "a", "query": "What did Mochi chew through?", "relevant": ["c1#1"]},
        {"id": "b", "query": "what did  Mochi chew through?", "relevant": ["c2#7"]},
        {"id": "c", "query": "Who visited Ana?", "relevant": ["c1#3"]},
        {"id": "d", "query": "Who visited Ana?", "relevant": ["c1#3"]},
    ]
    paraphrases = [
        {"id": "a~p1", "query": "What did the cat ruin?", "metadata": {"paraphrase_of": "a"}},
        {"id": "c~p1", "query": "Which relative came?", "metadata": {"paraphrase_of": "c"}},
        {"id": "d~p1", "query": "Which relative came?", "metadata": {"paraphrase_of": "d"}},
    ]
    paraphrases[0]["relevant"] = ["c1#1"]
    paraphrases[1]["relevant"] = ["c1#3"]
    paraphrases[2]["relevant"] = ["c9#9"]
    kept, kept_paraphrases, removed = drop_ambiguous(questions, paraphrases)
    assert [q["id"] for q in kept] == ["c", "d"]
    assert kept_paraphrases == []
    reasons = {row["id"]: row["reason"] for row in removed}
    assert reasons["a~p1"] == "paraphrase of a removed question"
    assert {"a", "b", "c~p1", "d~p1"} <= reasons.keys() and len(reasons) == 5


@pytest.mark.parametrize("corpus", ["manpages", "pydocs", "conversations", "chats"])
def test_no_committed_wording_names_two_different_answers(corpus):
    """One wording, one answer: a question or paraphrase worded like another line of its
    set with other evidence cannot be ranked right (issue 41: "What did Mochi chew
    through?" in four chats). The conversation generator drops them into removed.jsonl."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "data" / "evals" / corpus
    rows = [
        json.loads(line)
        for name in ("queries", "paraphrases")
        for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    evidence: dict[str, set[tuple[str, ...]]] = {}
    for row in rows:
        words = " ".join(row["query"].lower().split())
        evidence.setdefault(words, set()).add(tuple(sorted(row["relevant"])))
    assert {text: seen for text, seen in evidence.items() if len(seen) > 1} == {}
