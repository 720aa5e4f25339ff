"""Document chunking by heading structure (Markdown, HTML, plain text): pure."""

from __future__ import annotations

from pathlib import Path

import pytest

from packs.errors import InvalidInput, SourceNotFound, UnsupportedSource
from packs.ingest.documents import (
    Block,
    chunk_blocks,
    chunk_document,
    parse_html,
    parse_markdown,
    read_document,
)

GUIDE = """---
title: ignored front matter
---
# Operations guide

Read this first.

## Night batch

The nightly batch recalculates mark-to-market values.

### Failures

```bash
# not a heading: inside a code fence
rerun-batch --from-checkpoint
```

Rerun it from the last checkpoint.

Settlement
----------

Invoices go out on the third business day.
"""


def test_markdown_blocks_follow_atx_and_setext_headings_and_keep_fences_whole():
    blocks = list(parse_markdown(GUIDE))
    headings = [(b.level, b.text) for b in blocks if b.level]
    assert headings == [
        (1, "Operations guide"),
        (2, "Night batch"),
        (3, "Failures"),
        (2, "Settlement"),
    ]
    fence = next(b.text for b in blocks if b.text.startswith("```"))
    assert "# not a heading" in fence and fence.endswith("```")


def test_markdown_sections_become_chunks_titled_by_their_heading_path():
    chunks = chunk_document(GUIDE, "markdown", "guide")
    assert [c.title for c in chunks] == [
        "Operations guide",
        "Operations guide > Night batch",
        "Operations guide > Night batch > Failures",
        "Operations guide > Settlement",
    ]
    assert [c.position for c in chunks] == [0, 1, 2, 3]
    assert (
        chunks[3].text
        == "Operations guide > Settlement\n\nInvoices go out on the third business day."
    )
    assert "rerun-batch" in chunks[2].text and "last checkpoint" in chunks[2].text


def test_a_long_section_splits_at_paragraphs_then_sentences_within_max_chars():
    para = "This sentence is about forty characters. " * 10  # ~410 chars
    blocks = [Block(1, "Doc"), Block(0, para), Block(0, para), Block(0, "Short end.")]
    chunks = chunk_blocks(blocks, "doc", max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    body = " ".join(c.text.split("\n\n", 1)[1] for c in chunks)
    assert body.split() == (para + para + "Short end.").split()


def test_html_headings_paragraphs_and_lists_skip_scripts_and_navigation():
    html = """<html><head><title>Desk manual</title><style>p{}</style></head><body>
    <nav><a href="/">Home</a></nav>
    <h1>Desk manual</h1><p>Welcome &amp; hello.</p>
    <h2>Limits</h2><ul><li>Max position: five lots</li><li>Stop at a daily loss</li></ul>
    <script>alert('x')</script>
    <h2>Contacts</h2><div>Risk desk, <b>extension</b> four.</div></body></html>"""
    blocks = parse_html(html)
    assert [(b.level, b.text) for b in blocks] == [
        (1, "Desk manual"),
        (0, "Welcome & hello."),
        (2, "Limits"),
        (0, "- Max position: five lots"),
        (0, "- Stop at a daily loss"),
        (2, "Contacts"),
        (0, "Risk desk, extension four."),
    ]
    chunks = chunk_document(html, "html", "desk")
    assert [c.title for c in chunks] == [
        "Desk manual",
        "Desk manual > Limits",
        "Desk manual > Contacts",
    ]


def test_plain_text_is_chunked_by_paragraphs_under_the_file_name():
    text = "First paragraph.\n\nSecond paragraph.\n"
    chunks = chunk_document(text, "text", "notes")
    assert [(c.title, c.text) for c in chunks] == [
        ("notes", "notes\n\nFirst paragraph.\n\nSecond paragraph.")
    ]


def test_read_document_gives_stable_sources_and_positions(tmp_path: Path):
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    first = read_document(path, "docs/guide.md")
    again = read_document(path, "docs/guide.md")
    assert first == again
    assert {c.source for c in first} == {"docs/guide.md"}
    assert first[0].metadata == {"kind": "document", "format": "markdown"}


def test_bad_documents_get_clear_errors(tmp_path: Path):
    with pytest.raises(UnsupportedSource, match="not a document"):
        read_document(tmp_path / "talk.mp3", "talk.mp3")
    with pytest.raises(SourceNotFound, match="No document"):
        read_document(tmp_path / "missing.md", "missing.md")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(InvalidInput, match="not UTF-8"):
        read_document(latin, "latin.txt")
