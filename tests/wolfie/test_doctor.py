"""``wolfie doctor`` as a user runs it: a subprocess, its exit code, its text and JSON.

A healthy Pack exits 0; each kind of damage of issue 23 (a creation cut short, deleted
or scrambled data files, a deleted latest manifest, a deleted ``pack_meta``, utilities
that drifted from the reward log) exits 1 and names what it found, and the doctor never
writes: the damaged files are as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from packs import Pack
from packs.store import schemas as S
from tests.support import tamper
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

REPO = Path(__file__).resolve().parents[2]


def doctor(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PREFECT_LOGGING_LEVEL": "CRITICAL",
    }
    return subprocess.run(
        [sys.executable, "-m", "wolfie.cli", "doctor", "--root", str(root), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def findings(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[bool, str]]:
    report = json.loads(result.stdout)
    return {f["check"]: (f["ok"], f["detail"]) for f in report["findings"]}


def drift_a_utility(folder: Path) -> None:
    """Overwrite one memory's stored utility behind the reward log's back."""
    with Pack.open("t", folder.parent, embedder=SeededEmbedder()) as pack:
        memory = pack.query("rewards")["memory_id"][0]
        fields = storage_of(pack).schema(S.MEMORIES)
        row = pa.table(
            {"id": [memory], "utility": [0.9]},
            schema=pa.schema([fields.field("id"), fields.field("utility")]),
        )
        storage_of(pack).merge(S.MEMORIES, row, "id", update=True, insert=False)


def test_a_healthy_pack_exits_0(tmp_root: Path):
    tamper.build(tmp_root)
    result = doctor(tmp_root, "--pack", "t", "--json")
    assert result.returncode == 0, result.stderr
    found = findings(result)
    assert all(ok for ok, _ in found.values())
    assert found["pack_meta"][1].endswith("alpha 0.4")
    assert found["table memories"][1].startswith("4 rows")
    assert found["learned state"] == (
        True,
        "utilities of 4 memories equal the replay of 3 reward events",
    )
    text = doctor(tmp_root, "--pack", "t")  # the table a person reads
    assert text.returncode == 0 and "Healthy." in text.stdout and "memories" in text.stdout


DAMAGE: dict[str, tuple[Callable[[Path], object], str, str]] = {
    "deleted data files": (tamper.delete_data_files, "table memories", "is damaged"),
    "scrambled data files": (tamper.scramble_data_files, "table memories", "is damaged"),
    "deleted latest manifest": (
        tamper.delete_latest_manifest,
        "table memories",
        "latest commit (version",
    ),
    "deleted pack_meta": (tamper.delete_pack_meta, "pack_meta", "deleted or lost"),
    "drifted utilities": (drift_a_utility, "learned state", "differ from the replay"),
}


@pytest.mark.parametrize("case", list(DAMAGE), ids=list(DAMAGE))
def test_each_kind_of_damage_exits_1_and_names_it(tmp_root: Path, case: str):
    damage, check, words = DAMAGE[case]
    folder = tamper.build(tmp_root)
    damage(folder)
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    result = doctor(tmp_root, "--pack", "t", "--json")
    assert result.returncode == 1, result.stderr
    found = findings(result)
    assert not found[check][0] and words in found[check][1]
    assert [name for name, (ok, _) in found.items() if not ok] == [check]  # nothing else
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before


def test_a_creation_cut_short_and_a_missing_pack(tmp_root: Path):
    tamper.cut_short_creation(tmp_root)
    result = doctor(tmp_root, "--pack", "t", "--json")
    assert result.returncode == 1
    found = findings(result)
    assert "creation cut short" in found["pack_meta"][1]
    assert found["table memories"] == (False, "half-made: no committed version")
    missing = doctor(tmp_root, "--pack", "nothing", "--json")
    assert missing.returncode == 1 and "no Pack 'nothing'" in missing.stdout
    assert not (tmp_root / "nothing").exists()  # looking never creates a folder
    bad = doctor(tmp_root, "--pack", "../escape")
    assert bad.returncode == 2 and "Invalid Pack name" in bad.stderr
