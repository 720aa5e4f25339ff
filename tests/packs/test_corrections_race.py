"""Corrections remembered at the same instant by several processes (issue 30).

A correction is a new memory that supersedes the old one; racing writers must leave what
a sequential order would: one current memory of the situation (the newest fact), every
other one superseded by a memory that exists, and no fact folded into another.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from packs import Pack
from tests.support.remember_race import race

pytestmark = pytest.mark.slow

QUESTION = "What is the staging database host?"
OLD = "The staging database host is db-old.internal"


def _current(pack: Pack) -> list[dict]:
    """Every memory of the situation, current or not (search shows only current ones)."""
    rows = pack.query("memories").to_dicts()
    return [r for r in rows if r["intent_text"] == QUESTION]


def test_two_processes_remembering_the_same_correction_store_it_once(tmp_root: Path):
    with Pack.open("race", tmp_root) as pack:
        old = pack.remember(QUESTION, OLD).id
    new = "The staging database host moved to db-new.internal"
    results = race(str(tmp_root), [[(QUESTION, new)], [(QUESTION, new)]])
    with Pack.open("race", tmp_root, read_only=True) as pack:
        rows = {r["id"]: r for r in _current(pack)}
        assert len(rows) == 2  # the old fact and the correction, once
        [(new_id, _, _)] = results[0]
        assert {memory_id for [(memory_id, _, _)] in results} == {new_id}
        assert {status for [(_, status, _)] in results} <= {"superseded", "exists"}
        assert rows[old]["superseded_by"] == new_id and rows[new_id]["superseded_at"] is None
        assert pack.search(QUESTION).ids[:1] == [new_id]


def test_three_processes_correcting_one_fact_leave_one_current_fact(tmp_root: Path):
    with Pack.open("race", tmp_root) as pack:
        old = pack.remember(QUESTION, OLD).id
    hosts = ["db-blue.internal", "db-green.internal", "db-red.internal"]
    plan = [[(QUESTION, f"The staging database host moved to {h}")] for h in hosts]
    results = race(str(tmp_root), plan)
    with Pack.open("race", tmp_root, read_only=True) as pack:
        rows = {r["id"]: r for r in _current(pack)}
        assert len(rows) == 4  # no correction was folded into another
        current = [m for m, r in rows.items() if r["superseded_at"] is None]
        assert len(current) == 1 and current[0] != old
        assert all(r["superseded_by"] in rows for m, r in rows.items() if m not in current)
        assert {status for [(_, status, _)] in results} == {"superseded"}
        shown = pack.search(QUESTION)
        assert current[0] in shown.ids and not set(rows) - {current[0]} & set(shown.ids)
        assert sum(h in shown.prompt for h in hosts) == 1 and "db-old" not in shown.prompt
