"""The hand-written chats corpus (``data/evals/chats``, issue 29 §4): five chats of dated
sessions in order, questions that name turns of their own chat, one paraphrase per
training question, and questions alike in wording that mostly have different evidence.

No embedding except in the last test, which embeds the 626 questions (about 3 s).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evals.evalset import EvalSet, check_known_ids, load_eval_set
from evals.protocol import FOLDS, build_protocol, paraphrase_originals
from packs.bundles import read_jsonl
from packs.store.rows import knowledge_id

CHATS = Path(__file__).resolve().parents[2] / "data" / "evals" / "chats"
KINDS = {"single-hop", "multi-hop", "temporal", "open-ended"}  # LoCoMo's, bar adversarial


@pytest.fixture(scope="module")
def turns() -> list[dict[str, Any]]:
    return [obj for _, obj in read_jsonl(CHATS / "knowledge.jsonl")]


@pytest.fixture(scope="module")
def questions() -> EvalSet:
    return load_eval_set(CHATS / "queries.jsonl")


@pytest.fixture(scope="module")
def paraphrases() -> EvalSet:
    return load_eval_set(CHATS / "paraphrases.jsonl")


def test_questions_and_paraphrases_name_turns_of_the_corpus(turns, questions, paraphrases):
    known = {knowledge_id(t["source"], t["position"]) for t in turns}
    check_known_ids(questions, known, "corpus")
    check_known_ids(paraphrases, known, "corpus")
    assert 1800 <= len(turns) <= 2500 and 500 <= len(questions.queries) <= 650


def prefix(meta: dict[str, Any]) -> str:
    """How a benchmark of long conversations stores a turn: ``[<date>] <Speaker>: ``."""
    return f"[{meta['date']}] {meta['speaker']}: "


def test_each_chat_is_dated_sessions_in_order(turns):
    chats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in turns:
        chats[turn["source"]].append(turn)
    assert len(chats) == 5
    for chat, rows in chats.items():
        meta = [r["metadata"] for r in rows]
        assert [r["position"] for r in rows] == list(range(len(rows))), chat
        assert all(m["conversation"] == chat for m in meta)
        assert all(r["text"].startswith(prefix(r["metadata"])) for r in rows), chat
        assert len({m["speaker"] for m in meta}) == 2, chat
        days = [date.fromisoformat(m["date"]) for m in meta]
        assert days == sorted(days), f"{chat}: a date goes back"
        sessions: dict[int, list[str]] = defaultdict(list)
        for m in meta:
            sessions[m["session"]].append(m["date"])
        assert sorted(sessions) == list(range(1, len(sessions) + 1)), chat
        assert all(len(set(d)) == 1 and 14 <= len(d) <= 30 for d in sessions.values()), chat
        assert 18 <= len(sessions) <= 25, chat
        assert 8 * 30 <= (days[-1] - days[0]).days <= 14 * 31, chat


def test_questions_point_into_their_own_chat_and_split_by_id_hash(questions):
    per_chat: dict[str, int] = defaultdict(int)
    for q in questions.queries:
        chat = q.metadata["conversation"]
        per_chat[chat] += 1
        assert q.metadata["kind"] in KINDS, q.id
        assert q.relevant and all(ref.startswith(f"{chat}#") for ref in q.relevant), q.id
        even = int(hashlib.sha256(q.id.encode()).hexdigest()[0], 16) % 2 == 0
        assert q.split == ("train" if even else "heldout"), q.id
    assert len(per_chat) == 5 and all(100 <= n <= 130 for n in per_chat.values())


def test_every_training_question_has_one_paraphrase_and_each_fold_scores_300(
    questions, paraphrases
):
    originals = paraphrase_originals(questions, paraphrases)
    by_id = {q.id: q for q in questions.queries}
    assert sorted(originals.values()) == sorted(q.id for q in questions.split("train"))
    for p in paraphrases.queries:
        original = by_id[originals[p.id]]
        assert p.relevant == original.relevant and p.query.lower() != original.query.lower()
    for fold in FOLDS:
        assert sum(build_protocol(questions, paraphrases, fold).sizes().values()) >= 300


@pytest.mark.slow
def test_similar_questions_rarely_share_an_evidence_turn(questions):
    """The failure the corpus is for (issue 29 §4): questions about one person and event
    ("When did Maya adopt Pickle?", "What breed is Pickle?") have different evidence
    turns, so a turn rewarded for one is not the answer to its look-alikes. Of the
    same-chat question pairs at cosine >= 0.8 (default embedder), 19 of 172 (11 %)
    share an evidence turn; in the template corpus ``data/evals/conversations``, 63 of
    66 (95 %). The bound of 25 % is hand-set between the two."""
    from packs.embeddings import default_embedder

    qs = questions.queries
    vectors = np.asarray(default_embedder().embed([q.query for q in qs]), dtype=np.float64)
    cosine = vectors @ vectors.T
    pairs = shared = 0
    for a in range(len(qs)):
        for b in range(a + 1, len(qs)):
            same_chat = qs[a].metadata["conversation"] == qs[b].metadata["conversation"]
            if same_chat and cosine[a, b] >= 0.8:
                pairs += 1
                shared += bool(set(qs[a].relevant) & set(qs[b].relevant))
    print(f"{shared} of {pairs} look-alike pairs share an evidence turn")  # shown with -s
    assert pairs >= 100, pairs
    assert shared / pairs < 0.25, (shared, pairs)
