"""Export and import of a whole Pack (issue 22, "Export and import"): a round trip to a
folder and to S3 gives a Pack that recalls and ranks the same, and bad files, another
embedding space and a Pack that holds rows are refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import EmbeddingMismatch, InvalidInput, SchemaVersionError
from packs.pack_io import PackNotEmpty, import_pack
from packs.transfer.formats import MANIFEST
from tests.support.packs import HashEmbedder

QUERIES = ["the deploy failed on a locked database", "clear the build cache", "flaky tests"]
SCOPED = ("alice", "the deploy failed on a locked database")


def _build(root: Path) -> dict[str, str]:
    with Pack.open("source", root, settings={"k2": 4}) as pack:
        ids = {
            "lock": pack.remember(
                "The deploy failed with a locked database",
                "Stop the scheduler, then migrate.",
                polarity="success",
            ).id,
            "cache": pack.remember(
                "The build broke after a dependency bump",
                "Clear the build cache and rebuild.",
                outcome="fixed",
            ).id,
            "flaky": pack.remember(
                "Tests fail at random on CI", "Rerun them until green.", polarity="failure"
            ).id,
            "alice": pack.remember(
                "The deploy failed with a locked database again",
                "Ask Alice's DBA to kill the session.",
                scope="alice",
            ).id,
        }
        runbook = [KnowledgeChunk(f"Locks: section {i}", "runbook.md", i) for i in range(3)]
        pack.add_knowledge(runbook)
        for query, rating in zip(QUERIES * 2, (1.0, 0.5, -1.0, 0.8, 1.0, -0.6), strict=True):
            pack.feedback(pack.recall(query).episode_id or "", rating)
        pack.recall(SCOPED[1], scope="alice")
        pack.revise(ids["cache"], response="Pin the dependency, then clear the cache.")
        pack.configure(lam=0.6)
        pack.eval_sets.save("smoke", '{"query": "locked database", "relevant": ["x"]}\n')
    return ids


def _ranking(pack: Pack) -> list[list[tuple[str, float, float, float]]]:
    found = [pack.search(q) for q in QUERIES] + [pack.search(SCOPED[1], scope=SCOPED[0])]
    return [
        [
            (i.id, round(i.score, 9), round(i.ranked_utility, 12), round(i.track_record, 12))
            for i in result.items
        ]
        for result in found
    ]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("transfer")
    ids = _build(root / "packs")
    with Pack.open("source", root / "packs", read_only=True) as source:
        _ranking(source)  # the first search of a handle goes to LanceDB, the next to its cache
        expected = {
            "ranking": _ranking(source),
            "rows": {n: source.count(n) for n in ("memories", "episodes", "reward_events")},
            "history": [v.to_dict() for v in source.history(ids["cache"])],
            "settings": (source.settings, source.settings_version),
        }
        files = {
            "jsonl": source.transfer.export(root / "source.jsonl"),
            "parquet": source.transfer.export(root / "source-export"),
        }
    return root, ids, expected, files


def _check_same(pack: Pack, ids: dict[str, str], expected: dict) -> None:
    _ranking(pack)
    assert _ranking(pack) == expected["ranking"]
    assert {n: pack.count(n) for n in ("memories", "episodes", "reward_events")} == expected["rows"]
    assert [v.to_dict() for v in pack.history(ids["cache"])] == expected["history"]
    assert (pack.settings, pack.settings_version) == expected["settings"]
    report = pack.rebuild_utilities(write=False)
    assert report.changed == 0 and report.max_utility_drift < 1e-9
    assert pack.eval_sets.read("smoke").digest


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_round_trip_through_a_folder_recalls_and_ranks_the_same(exported, tmp_path, kind):
    _root, ids, expected, files = exported
    report = import_pack(files[kind].path, "copy", tmp_path, keep_scopes=True)
    assert report.tables == files[kind].tables  # every table, every row
    assert report.rebuilt == 0 and not report.merged
    assert report.tables["reward_events"] == expected["rows"]["reward_events"] > 0
    with Pack.open("copy", tmp_path) as copy:
        _check_same(copy, ids, expected)
        assert copy.settings.ranking.lam == 0.6 and copy.settings.ranking.k2 == 4


@pytest.mark.s3
def test_a_round_trip_from_a_folder_to_s3_ranks_the_same(exported, s3):
    _root, ids, expected, files = exported
    target = s3.fresh_root()
    options = s3.storage_options
    report = import_pack(
        files["parquet"].path, "copy", target, keep_scopes=True, storage_options=options
    )
    assert report.tables["memories"] == files["parquet"].tables["memories"]
    with Pack.open("copy", target, storage_options=s3.storage_options) as copy:
        _check_same(copy, ids, expected)


def test_an_import_into_a_pack_with_rows_needs_merge_and_keeps_its_own(exported, tmp_path):
    _root, ids, expected, files = exported
    with Pack.open("mine", tmp_path, settings={"k2": 2}) as mine:
        own = mine.remember("My own memory", "Kept through the merge.").id
    with pytest.raises(PackNotEmpty, match=r"already holds rows.*--merge"):
        import_pack(files["jsonl"].path, "mine", tmp_path)
    with Pack.open("mine", tmp_path, read_only=True) as mine:
        assert mine.count() == 1
    report = import_pack(files["jsonl"].path, "mine", tmp_path, merge=True, keep_scopes=True)
    assert report.merged and report.skipped == ["pack_meta", "tuning"]
    again = import_pack(files["parquet"].path, "mine", tmp_path, merge=True, keep_scopes=True)
    with Pack.open("mine", tmp_path, read_only=True) as mine:
        assert mine.count() == expected["rows"]["memories"] + 1
        assert mine.count("reward_events") == expected["rows"]["reward_events"]
        assert mine.get(own)["response_summary"] == "Kept through the merge."
        assert mine.settings.ranking.k2 == 2 and again.rebuilt == 0
        assert mine.get(ids["lock"])["utility"] != 0.0


def test_bad_exports_and_other_spaces_are_refused(exported, tmp_path):
    root, _ids, _expected, files = exported
    with Pack.open("hashed", tmp_path / "other", embedder=HashEmbedder()) as hashed:
        hashed.remember("anything", "at all")
        alien = hashed.transfer.export(tmp_path / "alien.jsonl")
    with pytest.raises(EmbeddingMismatch, match="space"):
        import_pack(alien.path, "copy", tmp_path / "packs")
    assert not (tmp_path / "packs").exists()  # refused before a Pack was made

    source = Path(files["parquet"].path)
    manifest = json.loads((source / MANIFEST).read_text())

    def variant(name: str, **changes: object) -> Path:
        copy = tmp_path / name
        copy.mkdir()
        (copy / "tables").symlink_to(source / "tables")
        (copy / MANIFEST).write_text(json.dumps({**manifest, **changes}))
        return copy

    cases = [
        (InvalidInput, "No Wolfie export", tmp_path / "missing"),
        (InvalidInput, "format version", variant("v9", format_version=9)),
        (InvalidInput, "not a Wolfie export", variant("not-wolfie", format="something-else")),
        (
            InvalidInput,
            "not one Wolfie writes",
            variant("escape", tables={"../escape": manifest["tables"]["memories"]}),
        ),
        (SchemaVersionError, "Upgrade Wolfie", variant("newer", schema_version=99)),
    ]
    for error, says, path in cases:
        with pytest.raises(error, match=says):
            import_pack(path, "copy", tmp_path / "packs")
    damaged = tmp_path / "damaged.jsonl"
    lines = Path(files["jsonl"].path).read_text().splitlines()
    damaged.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n")
    with pytest.raises(InvalidInput, match="line 4 is not an export row"):
        import_pack(damaged, "damaged", tmp_path / "packs")
    with (
        Pack.open("source", root / "packs", read_only=True) as source,
        pytest.raises(InvalidInput, match="exists"),
    ):
        source.transfer.export(files["jsonl"].path)
