"""The documents flow: a folder of Markdown, HTML and text into a Pack, idempotently."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.documents import ingest_documents_flow
from packs import Pack
from packs.errors import IngestFailed

GUIDE = """# Operations guide

## Night batch

The nightly batch recalculates mark-to-market values for all open positions.

## Settlement

Invoices go out on the third business day of each month.
"""
DESK = """<html><head><title>Desk manual</title></head><body>
<h1>Desk manual</h1><h2>Limits</h2><p>No trader may hold more than five lots overnight.</p>
</body></html>"""


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "desk").mkdir(parents=True)
    (folder / "guide.md").write_text(GUIDE)
    (folder / "desk" / "manual.html").write_text(DESK)
    (folder / "notes.txt").write_text("Call the risk desk before noon.\n")
    (folder / "logo.png").write_bytes(b"\x89PNG not a document")  # not collected
    return folder


def test_documents_are_chunked_by_heading_and_recalled(docs: Path, tmp_root: Path):
    result = ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    assert {row.document: row.chunks for row in result.documents} == {
        "docs/desk/manual.html": 1,
        "docs/guide.md": 2,
        "docs/notes.txt": 1,
    }
    assert result.written == result.chunks == 4
    with Pack.open("kb", tmp_root) as pack:
        recall = pack.recall("When are invoices sent?", kind="knowledge")
    top = recall.items[0]
    assert (top.source, top.title) == ("docs/guide.md", "Operations guide > Settlement")


def test_a_rerun_writes_nothing_and_an_edit_rewrites_only_its_section(docs: Path, tmp_root):
    ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    again = ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    assert again.written == 0 and again.chunks == 4
    (docs / "guide.md").write_text(GUIDE.replace("third business day", "fifth business day"))
    edited = ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    assert edited.written == 1
    (docs / "guide.md").write_text(GUIDE.split("## Settlement")[0])
    shrunk = ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    # The Settlement chunk is no longer produced: reported as stale, not deleted (the
    # Pack has no delete API; its learned utility may still matter).
    assert shrunk.written == 0 and shrunk.stale == 1
    with Pack.open("kb", tmp_root, read_only=True) as pack:
        assert pack.count(kind="knowledge") == 4


def test_a_bad_document_fails_alone(docs: Path, tmp_root: Path):
    (docs / "latin.txt").write_bytes("Café au lait".encode("latin-1"))
    result = ingest_documents_flow(
        paths=[str(docs), str(docs / "missing.md")],
        pack="kb",
        root=str(tmp_root),
        fail_on_error=False,
    )
    errors = {row.document: row.error for row in result.documents if row.error}
    assert (
        errors["docs/latin.txt"].startswith("InvalidInput: ")
        and "UTF-8" in errors["docs/latin.txt"]
    )
    assert errors["missing.md"].startswith("SourceNotFound: ")
    assert result.written == 4
    with pytest.raises(IngestFailed, match="1 of 1 documents failed"):
        ingest_documents_flow(paths=[str(docs / "missing.md")], pack="kb", root=str(tmp_root))


def test_one_file_by_its_folder_and_by_its_own_path_is_stored_once(docs: Path, tmp_root):
    """Bug (issue 23): the same file ingested through its folder and then by its own path
    became two sets of rows (sources ``docs/guide.md`` and ``guide.md``), and recall
    filled two of three slots with the same text."""
    ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    again = ingest_documents_flow(paths=[str(docs / "guide.md")], pack="kb", root=str(tmp_root))
    assert (again.chunks, again.written) == (2, 0)
    both = ingest_documents_flow(
        paths=[str(docs / "notes.txt"), str(docs)], pack="kb", root=str(tmp_root)
    )  # the same file twice in one run, the first time by its own name
    assert both.written == 0
    with Pack.open("kb", tmp_root) as pack:
        assert pack.count(kind="knowledge") == 4
        found = pack.recall("When are invoices sent?", k=3, kind="knowledge")
        texts = [item.text for item in found.items]
    assert len(set(texts)) == len(texts) >= 2  # no slot holds a copy
    # a changed file is still rewritten in place, by the source it was stored under
    (docs / "guide.md").write_text(GUIDE.replace("third business day", "fifth business day"))
    edited = ingest_documents_flow(paths=[str(docs)], pack="kb", root=str(tmp_root))
    assert edited.written == 1
    with Pack.open("kb", tmp_root, read_only=True) as pack:
        assert pack.count(kind="knowledge") == 4
