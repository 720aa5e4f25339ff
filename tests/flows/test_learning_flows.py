"""The scheduled learning flows on the real Prefect engine and real LanceDB Packs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterId,
)

from evals.episodes import load_episodes, run_epochs
from flows.demo import DEMO_DIR
from flows.learning import maintain_pack, pack_health, recompute_utilities, refresh_lessons_flow
from packs import Pack
from packs.bundles import load_bundle
from packs.errors import EmptyPack, PackNotFound, SchemaVersionError
from packs.records import KnowledgeChunk
from packs.store import schemas as S
from packs.store.rows import knowledge_row
from tests.support.json_server import Reply, chat_reply, json_server
from tests.support.storage import storage_of


@pytest.fixture(scope="module")
def learned_root(tmp_path_factory) -> Path:
    """A demo Pack after two epochs of rewarded episodes (built once per module)."""
    root = tmp_path_factory.mktemp("learned")
    with Pack.open("journal", root) as pack:
        loaded = load_bundle(pack, DEMO_DIR)
        run_epochs(pack, load_episodes(DEMO_DIR / "episodes.jsonl", loaded.refs), 2)
    return root


@pytest.fixture
def root(learned_root, tmp_path) -> str:
    """A private copy of the learned Pack, so each test can change it."""
    shutil.copytree(learned_root, tmp_path / "packs")
    return str(tmp_path / "packs")


def artifacts(*keys: str) -> dict[str, object]:
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=list(keys)))
        )
    return {a.key: a.data for a in found}


def run_artifacts(flow: Any, **parameters: Any) -> tuple[Any, dict[str, Any]]:
    """Run ``flow``; its result and the artifacts of that one run, by key."""
    state = flow(**parameters, return_state=True)
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            flow_run_filter=FlowRunFilter(
                id=FlowRunFilterId(any_=[state.state_details.flow_run_id])
            )
        )
    return state.result(), {a.key: a.data for a in found}


def test_recompute_equals_online_and_is_idempotent(root):
    first = recompute_utilities(pack="journal", root=root)
    assert first.events > 0 and first.changed == 0
    assert first.max_utility_drift < 1e-9
    # lose the online utilities, as a crash between the log and the utilities would
    with Pack.open("journal", root) as pack:
        online = dict(pack.query("items", columns=["id", "utility"]).iter_rows())
        storage_of(pack).update_where(S.MEMORIES, "true", {"utility": "0.0"})
        version = pack.versions("items")[-1]["version"]
    repaired = recompute_utilities(pack="journal", root=root)
    assert repaired.changed == sum(1 for u in online.values() if u != 0.0)
    with Pack.open("journal", root, read_only=True) as pack:
        assert pack.versions("items")[-1]["version"] == version + 1  # one commit, never half
        rebuilt = dict(pack.query("items", columns=["id", "utility"]).iter_rows())
    assert rebuilt == pytest.approx(online)
    assert recompute_utilities(pack="journal", root=root).changed == 0
    assert "journal-utilities" in artifacts("journal-utilities")


def test_refresh_lessons_template_then_no_op(root):
    report = refresh_lessons_flow(pack="journal", root=root, writer="template")
    assert report.written == report.candidates > 0 and not report.failures
    with Pack.open("journal", root, read_only=True) as pack:
        rows = pack.query("items").to_dicts()
        lessons = [r for r in rows if r["experience_summary"]]
        assert len(lessons) == report.written
        failing = [r for r in lessons if r["utility"] < -0.1]
        assert all("Avoid" in r["experience_summary"] for r in failing)
        assert pack.count(S.LESSON_LOG) == report.written
        recall = pack.search("I missed the move, should I jump in?")
        assert "## Lessons" in recall.prompt and "[template lesson]" in recall.prompt
    assert refresh_lessons_flow(pack="journal", root=root, writer="template").candidates == 0


def test_refresh_lessons_publishes_the_lessons_it_wrote(root):
    """Bug: refresh-lessons published only counts; the operator could not read a lesson."""
    report, found = run_artifacts(refresh_lessons_flow, pack="journal", root=root)
    table = found["journal-lessons-written"]
    rows = json.loads(table) if isinstance(table, str) else table
    assert len(rows) == report.written > 0
    with Pack.open("journal", root, read_only=True) as pack:
        for row in rows:
            stored = pack.get(row["memory_id"])
            assert row["lesson"] == stored["experience_summary"]
            assert row["intent"] == stored["intent_text"][:120] or row["intent"].endswith("...")
    assert "lessons written: " + str(report.written) in found["journal-lessons"]


def test_refresh_lessons_openai_writer_against_a_local_server(root, monkeypatch):
    with json_server(lambda p, body, h: chat_reply("Wait for the retest before buying.")) as s:
        monkeypatch.setenv("WOLFIE_LLM_BASE_URL", s.url)
        monkeypatch.setenv("WOLFIE_LLM_MODEL", "test-model")
        monkeypatch.setenv("WOLFIE_LLM_API_KEY", "sk-test-secret")
        report = refresh_lessons_flow(pack="journal", root=root, writer="openai", limit=3)
        assert report.written == 3 and len(s.requests) == 3
    with Pack.open("journal", root, read_only=True) as pack:
        lessons = pack.query("items", columns=["experience_summary"])["experience_summary"]
    assert lessons.to_list().count("Wait for the retest before buying.") == 3


def test_failing_writer_keeps_the_old_lesson_and_records_why(root, monkeypatch):
    refresh_lessons_flow(pack="journal", root=root, writer="template")
    with Pack.open("journal", root) as pack:  # new evidence for one memory
        recall = pack.recall("I missed the move this morning, should I jump in now?")
        pack.feedback(recall.episode_id, 1.0)
        before = {i: pack.get(i)["experience_summary"] for i in recall.ids}
    with json_server(lambda p, body, h: Reply(body={"garbage": True})) as s:
        monkeypatch.setenv("WOLFIE_LLM_BASE_URL", s.url)
        monkeypatch.setenv("WOLFIE_LLM_MODEL", "test-model")
        report = refresh_lessons_flow(pack="journal", root=root, writer="openai")
    assert report.written == 0 and set(report.failures) == set(recall.ids)
    with Pack.open("journal", root, read_only=True) as pack:
        assert {i: pack.get(i)["experience_summary"] for i in recall.ids} == before
        log = pack.query("lessons").to_dicts()
        assert sum(1 for r in log if r["status"] == "failed") == len(recall.ids)


def test_pack_health_appends_traces_and_publishes_a_chart(root):
    first = pack_health(pack="journal", root=root)
    second = pack_health(pack="journal", root=root)
    assert first.episode_count == second.episode_count == 24  # 12 demo episodes, 2 epochs
    with Pack.open("journal", root, read_only=True) as pack:
        assert pack.count(S.STATE_TRACES) == 2
    found = artifacts("journal-health", "journal-health-chart")
    assert "data:image/png;base64," in str(found["journal-health-chart"])
    assert "hit_rate" in str(found["journal-health"])


def test_pack_health_shows_best_and_worst_memories_with_their_lessons(root):
    """Bug: pack-health published only aggregate signals, not which memories help or hurt
    and what was learnt from them."""
    refresh_lessons_flow(pack="journal", root=root)
    _, found = run_artifacts(pack_health, pack="journal", root=root)
    markdown = found["journal-utility-extremes"]
    with Pack.open("journal", root, read_only=True) as pack:
        rows = (
            storage_of(pack)
            .scan(S.MEMORIES, ["id", "utility", "experience_summary"], "reward_count > 0")
            .to_pylist()
        )
    rows.sort(key=lambda r: r["utility"])
    best, worst = rows[-1], rows[0]
    assert best["utility"] > 0 > worst["utility"]
    top, bottom = markdown.split("#### Lowest Q")
    assert best["id"] in top and f"{best['utility']:+.2f}" in top
    assert worst["id"] in bottom and f"{worst['utility']:+.2f}" in bottom
    assert worst["experience_summary"].replace("|", "\\|") in bottom
    assert "Avoid" in worst["experience_summary"]


def test_maintenance_compacts_and_builds_indexes(root):
    with Pack.open("journal", root) as pack:
        rng = np.random.default_rng(0)
        rows = []
        for i in range(600):
            vec = rng.normal(size=384).astype(np.float32)
            chunk = KnowledgeChunk(f"synthetic chunk {i}", "synthetic.txt", i)
            rows.append(knowledge_row(chunk, vec / np.linalg.norm(vec), pack_now()))
        schema = S.memories_schema(384)
        for start in range(0, 600, 100):  # six commits: six small fragments
            storage_of(pack).append(
                S.MEMORIES, pa.Table.from_pylist(rows[start : start + 100], schema=schema)
            )
        before = storage_of(pack).fragment_count(S.MEMORIES)
    report = maintain_pack(pack="journal", root=root, retention_days=0, index_threshold=500)
    assert report.fragments_after["memories"] < before
    assert "memories.intent_embedding (ivf_sq, cosine)" in report.indexes_built
    with Pack.open("journal", root) as pack:
        assert pack.search("I missed the move, should I jump in?").items
        # retention 0 drops every old version; optimize's own two commits may remain
        assert len(pack.versions("items")) <= 2
    assert report.versions_removed["memories"] >= 6
    assert maintain_pack(pack="journal", root=root, index_threshold=500).indexes_built == []


def pack_now():
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_flows_refuse_missing_empty_and_newer_packs(tmp_path):
    root = str(tmp_path)
    with pytest.raises(PackNotFound):
        recompute_utilities(pack="nope", root=root)
    assert not (tmp_path / "nope").exists()
    Pack.open("empty", root).close()
    with pytest.raises(EmptyPack, match="no memories or knowledge"):
        pack_health(pack="empty", root=root)
    with Pack.open("future", root) as pack:
        pack.remember("intent", "response")
        storage_of(pack).write_meta({"schema_version": S.SCHEMA_VERSION + 1})
    with pytest.raises(SchemaVersionError):
        refresh_lessons_flow(pack="future", root=root)
