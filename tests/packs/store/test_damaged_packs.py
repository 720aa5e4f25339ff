"""A half-made or tampered Pack, through the API (issue 23; the CLI's ``wolfie doctor``
is in tests/wolfie/test_doctor.py).

Bugs: ENOSPC while creating a Pack left ``memories.lance`` with an empty ``_versions/``
and ``Pack.open(create=True)`` failed for ever; a deleted data file raised a bare
``RuntimeError``, scrambled bytes a bare ``ValueError``; a deleted latest manifest lost
the last acknowledged memory silently; a deleted ``pack_meta`` was recreated with
default settings (alpha 0.4 became 0.3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from packs import Pack
from packs.errors import DamagedPack, PackNotFound, StorageError, is_transient
from tests.support import tamper
from tests.support.packs import SeededEmbedder


def open_pack(root: Path, **kwargs: object) -> Pack:
    return Pack.open("t", root, embedder=SeededEmbedder(), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("table", ["memories", "pack_meta"])
def test_a_creation_cut_short_is_finished_on_the_next_open(tmp_root: Path, table: str):
    tamper.cut_short_creation(tmp_root, table=table)
    with pytest.raises(PackNotFound):  # read-only: nothing to read, nothing written
        open_pack(tmp_root, read_only=True)
    with open_pack(tmp_root) as pack:
        assert pack.remember("an intent", "a response").status == "created"
    with open_pack(tmp_root, read_only=True) as pack:
        assert pack.count() == 1


@pytest.mark.parametrize("damage", [tamper.delete_data_files, tamper.scramble_data_files])
def test_unreadable_data_files_raise_damaged_pack_naming_the_table(tmp_root: Path, damage):
    damage(tamper.build(tmp_root))
    pattern = r"Table 'memories' of Pack 't'.*backup"
    with (
        open_pack(tmp_root, read_only=True) as pack,
        pytest.raises(DamagedPack, match=pattern) as raised,
    ):
        pack.search("intent 2")
    assert isinstance(raised.value, StorageError) and not is_transient(raised.value)
    assert "wolfie doctor --pack t" in str(raised.value)


def test_a_deleted_latest_manifest_is_refused_not_silently_lost(tmp_root: Path):
    folder = tamper.build(tmp_root)
    lost = tamper.delete_latest_manifest(folder)
    for read_only in (True, False):
        with pytest.raises(DamagedPack, match=rf"'memories'.*version {lost}\) is missing"):
            open_pack(tmp_root, read_only=read_only)
    tamper.delete_hint(folder)  # what the message says to do to go on without it
    with open_pack(tmp_root, read_only=True) as pack:
        intents = pack.query("memories")["intent_text"].to_list()
    assert tamper.LAST_INTENT not in intents and len(intents) == 3


def test_a_deleted_pack_meta_is_never_recreated_with_defaults(tmp_root: Path):
    folder = tamper.build(tmp_root)
    tamper.delete_pack_meta(folder)
    for read_only in (True, False):
        with pytest.raises(DamagedPack, match=r"no settings.*pack_meta.*backup"):
            open_pack(tmp_root, read_only=read_only)
    assert not (folder / "pack_meta.lance").exists()  # nothing was written


@pytest.mark.parametrize("how", ["scramble", "truncate", "empty"])
def test_a_corrupted_manifest_is_a_damaged_pack_not_a_retry(tmp_root: Path, how: str):
    """Bug (issue 31, 13): a corrupted latest manifest was a TransientStorageError
    ("retry later"), which a retry can never fix."""
    tamper.corrupt_latest_manifest(tamper.build(tmp_root), how)
    for read_only in (True, False):
        pattern = r"Table 'memories' of Pack 't'.*backup"
        with (
            pytest.raises(DamagedPack, match=pattern) as raised,
            open_pack(tmp_root, read_only=read_only) as pack,
        ):
            pack.search("intent 2")
        assert not is_transient(raised.value)
