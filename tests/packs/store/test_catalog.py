"""Listing the Packs under a root (``wolfie packs``), on a folder and on S3."""

from __future__ import annotations

import pytest

from packs import KnowledgeChunk, Pack
from packs.errors import WolfieError
from packs.store.catalog import list_packs


def _fill(name: str, root: object, **options: object) -> None:
    with Pack.open(name, root, **options) as pack:  # type: ignore[arg-type]
        pack.add_knowledge([KnowledgeChunk("Risk one percent per trade.", "book.md", 0)])
        pack.remember("Sized up after a loss", "Lost 4R.", polarity="failure")


def test_lists_packs_with_counts_and_skips_other_folders(tmp_root):
    _fill("journal", tmp_root)
    Pack.open("empty", tmp_root).close()
    (tmp_root / "not-a-pack").mkdir()
    (tmp_root / ".hidden").mkdir()
    (tmp_root / "notes.txt").write_text("x")
    found = list_packs(tmp_root)
    assert [(p.name, p.memories, p.knowledge, p.episodes) for p in found] == [
        ("empty", 0, 0, 0),
        ("journal", 1, 1, 0),
    ]
    assert found[1].uri == f"{tmp_root}/journal"


def test_missing_root_has_no_packs_and_a_file_is_refused(tmp_path):
    assert list_packs(tmp_path / "nowhere") == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(WolfieError, match="not a folder"):
        list_packs(tmp_path / "file")


@pytest.mark.s3
def test_lists_packs_on_s3(s3):
    root = s3.fresh_root("catalog")
    _fill("alpha", root, storage_options=s3.storage_options)
    _fill("beta", root, storage_options=s3.storage_options)
    found = list_packs(root, s3.storage_options)
    assert [(p.name, p.memories, p.knowledge) for p in found] == [("alpha", 1, 1), ("beta", 1, 1)]
