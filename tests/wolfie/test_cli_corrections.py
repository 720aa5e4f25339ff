"""``wolfie revise | history | export | import`` as a user runs them: subprocesses, their
exit codes and output (issue 22). Bad input exits 2 with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packs import Pack
from tests.wolfie.test_cli import wolfie

INTENT = "The nightly export times out"


def _json(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def shell_pack(tmp_path_factory) -> tuple[str, str, str]:
    """A Pack with one rewarded memory, revised from the shell; (root, memory id, export)."""
    root = tmp_path_factory.mktemp("cli") / "packs"
    with Pack.open("ops", root) as pack:
        made = pack.remember(INTENT, "Raise the timeout.", metadata={"team": "data"}).id
        pack.feedback(pack.recall("the nightly export is timing out").episode_id or "", -1.0)
    pack_args = ["--pack", "ops", "--root", str(root)]
    revised = _json(
        wolfie(
            "revise",
            made,
            *pack_args,
            "--response",
            "Split the export by day.",
            "--outcome",
            "fixed",
            "--json",
        )
    )
    assert revised["status"] == "revised" and revised["version"]["utility_reset"]
    assert revised["version"]["utility_before"] == pytest.approx(-0.3)
    export = str(root.parent / "ops.jsonl")
    exported = _json(wolfie("export", export, *pack_args, "--json"))
    assert exported["format"] == "jsonl" and exported["tables"]["memory_history"] == 1
    return str(root), made, export


def test_revise_then_history_from_the_shell(shell_pack):
    root, made, _export = shell_pack
    with Pack.open("ops", root, read_only=True) as pack:
        row = pack.get(made)
        assert (row["response_summary"], row["outcome"]) == ("Split the export by day.", "fixed")
        assert (row["utility"], row["reward_count"]) == (0.0, 2)
    found = _json(wolfie("history", made, "--pack", "ops", "--root", root, "--json"))
    assert [(v["event"], v["source"]) for v in found["versions"]] == [
        ("remember", "api"),
        ("revise", "cli"),
    ]
    assert found["versions"][1]["changes"]["response"] == {
        "old": "Raise the timeout.",
        "new": "Split the export by day.",
    }
    table = wolfie("history", made, "--pack", "ops", "--root", root, columns=160)
    assert table.returncode == 0, table.stderr
    assert f"intent: - -> {INTENT}" in table.stdout  # version 1: what it was created with
    assert "response: Raise the timeout. -> Split the export by day." in table.stdout
    same = wolfie("revise", made, "--pack", "ops", "--root", root, "--outcome", "fixed")
    assert same.returncode == 0 and "Unchanged" in same.stdout


def test_export_then_import_into_a_new_pack_ranks_the_same(shell_pack, tmp_path):
    root, made, export = shell_pack
    imported = _json(wolfie("import", export, "--pack", "copy", "--root", str(tmp_path), "--json"))
    assert imported["tables"]["reward_events"] == 2 and imported["rebuilt"] == 0
    with (
        Pack.open("ops", root, read_only=True) as source,
        Pack.open("copy", tmp_path, read_only=True) as copy,
    ):
        query = "split the nightly export"
        assert [(i.id, i.score, i.track_record) for i in copy.search(query).items] == [
            (i.id, i.score, i.track_record) for i in source.search(query).items
        ]
        assert copy.history(made) == source.history(made)


@pytest.mark.s3
def test_import_from_a_folder_into_s3(shell_pack, s3):
    _root, made, export = shell_pack
    target = s3.fresh_root()
    done = wolfie("import", export, "--pack", "copy", "--root", target, env=s3.env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Imported" in done.stdout
    with Pack.open("copy", target, read_only=True, storage_options=s3.storage_options) as copy:
        assert copy.get(made)["response_summary"] == "Split the export by day."


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["revise", "m_nope", "--outcome", "x"], "has no memory 'm_nope'"),
        (["revise", "{made}", "--polarity", "meh"], "polarity must be"),
        (["revise", "{made}"], "Nothing to revise"),
        (["revise", "{made}", "--scope", "alice", "--outcome", "x"], "shared by every scope"),
        (["history", "m_nope"], "has no memory 'm_nope'"),
        (["export", "{export}"], "exists; export to a new path"),
        (["import", "{export}"], "already holds rows"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(shell_pack, args, says):
    root, made, export = shell_pack
    filled = [a.format(made=made, export=export) for a in args]
    done = wolfie(*filled, "--pack", "ops", "--root", root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


def test_export_needs_an_existing_pack(tmp_path: Path):
    done = wolfie("export", str(tmp_path / "x.jsonl"), "--pack", "nope", "--root", str(tmp_path))
    assert done.returncode == 2 and "No Pack 'nope'" in done.stderr
    assert not (tmp_path / "nope").exists() and not (tmp_path / "x.jsonl").exists()


def test_remember_supersedes_states_a_correction_from_the_shell(tmp_path: Path):
    """Issue 42: ``wolfie remember --supersedes ID``; an unknown id exits 2, one line."""
    root = tmp_path / "packs"
    with Pack.open("ops", root) as pack:
        old = pack.remember(INTENT, "Raise the timeout.").id
    args = ["--pack", "ops", "--root", str(root)]
    made = _json(
        wolfie("remember", INTENT, "Raise the timeout!", *args, "--supersedes", old, "--json")
    )
    assert (made["status"], made["superseded"]) == ("superseded", old)
    bad = wolfie("remember", INTENT, "Split it.", *args, "--supersedes", "m_nope")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "m_nope" in bad.stderr


def test_an_abbreviated_repeat_merges_from_the_shell(tmp_path: Path):
    """Issue 42: the same advice with "DB" for "database" merges into its memory (it used
    to supersede it, resetting what was learned); a new value still supersedes."""
    args = ["--pack", "ops", "--root", str(tmp_path / "packs"), "--json"]
    intent = "How do we roll back the staging database?"
    old = _json(
        wolfie("remember", intent, "Restore the staging database from the latest snapshot", *args)
    )
    again = _json(
        wolfie("remember", intent, "Restore the staging DB from the latest snapshot", *args)
    )
    assert (again["status"], again["id"]) == ("merged", old["id"])
    new = _json(wolfie("remember", intent, "Restore the staging DB from snapshot 42", *args))
    assert (new["status"], new["superseded"]) == ("superseded", old["id"])
