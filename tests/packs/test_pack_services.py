"""Issue 43, services not a gateway: a Pack's upkeep, probation, eval sets, lessons, memory
table and transfer are services built with it (``packs/services.py``), reached as
``pack.upkeep``, ``pack.probation``, ``pack.eval_sets``, ``pack.lessons``,
``pack.memory_table`` and ``pack.transfer``; the functions that took the Pack still work
for one release, with a DeprecationWarning."""

from __future__ import annotations

import pytest

from packs import Pack
from packs.eval_sets import EvalSets, read_eval_set, store_eval_set, stored_eval_sets
from packs.held import ProbationService, admit, held
from packs.lessons.one_memory import evidence_for, store_lesson
from packs.lessons.refresh import lesson_candidates, refresh_lessons
from packs.lessons.service import LessonService
from packs.lessons.writers import TemplateLessonWriter
from packs.memory_table import MemoryTable, memory_page
from packs.services import Served
from packs.transfer.pack_io import export_pack
from packs.transfer.service import PackTransfer
from packs.upkeep import Upkeep, forget_expired, maintain

LINE = '{"id": "q1", "query": "copy a file", "relevant": ["m"]}\n'


def test_each_service_is_one_object_per_handle(tmp_root):
    assert isinstance(Pack.__dict__["upkeep"], Served)  # on the class: the accessor
    with Pack.open("p", tmp_root) as pack, Pack.open("q", tmp_root) as other:
        kinds = {
            "upkeep": Upkeep,
            "probation": ProbationService,
            "eval_sets": EvalSets,
            "lessons": LessonService,
            "memory_table": MemoryTable,
            "transfer": PackTransfer,
        }
        for name, kind in kinds.items():
            service = getattr(pack, name)
            assert isinstance(service, kind) and getattr(pack, name) is service
            assert getattr(other, name) is not service


def test_the_old_functions_warn_and_do_what_the_services_do(tmp_root):
    with Pack.open("p", tmp_root) as pack:
        memory = pack.remember("copy a file", "use cp -r", confidence=0.9).id
        episode = pack.recall("copy a file").episode_id
        pack.feedback(episode, 1.0)
        with pytest.deprecated_call(match=r"pack\.eval_sets\.save\(\)"):
            stored = store_eval_set(pack, "smoke", LINE)
        with pytest.deprecated_call():
            assert stored_eval_sets(pack) == [stored] == pack.eval_sets.stored()
        with pytest.deprecated_call():
            assert read_eval_set(pack, "smoke") == stored
        with pytest.deprecated_call():
            assert held(pack) == pack.probation.held() == []
        with pytest.deprecated_call():
            assert admit(pack, [memory]) == []  # not held: nothing to confirm
        with pytest.deprecated_call():
            assert [e.memory_id for e in lesson_candidates(pack)] == [memory]
        with pytest.deprecated_call():
            [evidence] = evidence_for(pack, [memory])
        with pytest.deprecated_call():
            store_lesson(pack, evidence, "Use cp -r.", writer="w", model=None, episode_id=None)
        assert pack.get(memory)["experience_summary"] == "Use cp -r."
        with pytest.deprecated_call():
            assert refresh_lessons(pack, TemplateLessonWriter()).candidates == 0
        with pytest.deprecated_call():
            assert forget_expired(pack) == 0
        with pytest.deprecated_call(match=r"pack\.upkeep\.maintain\(\)"):
            assert maintain(pack).expired == 0
        with pytest.deprecated_call():
            assert memory_page(pack, every=True) == pack.memory_table.page(every=True)
        with pytest.deprecated_call(match=r"pack\.transfer\.export\(\)"):
            assert export_pack(pack, tmp_root / "p.jsonl").tables["memories"] == 1


def test_upkeep_drops_every_table_for_a_fresh_start(tmp_root):
    """``wolfie demo --fresh`` starts from nothing: ``pack.upkeep.drop_all``."""
    with Pack.open("p", tmp_root) as pack:
        pack.remember("copy a file", "use cp -r")
    with Pack.open("p", tmp_root) as pack:
        assert pack.count() == 1
        pack.upkeep.drop_all()
    with Pack.open("p", tmp_root) as pack:
        assert pack.count() == 0
