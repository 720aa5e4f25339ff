"""Issue 45: every relative link in README.md and docs/*.md resolves. docs/api.md pointed
to a README section, "Agent frameworks", that did not exist. A link's file must exist,
and its ``#anchor`` must name a heading of that file, slugged as GitHub slugs them. The
pages also name sections in prose (`` `docs/rewards.md`, "Revising" ``, ``(README,
"Section")``) and Markdown files in code spans (`` `docs/recall.md` ``): each such
section is a heading of its file, and each such file exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
EXTERNAL = ("http://", "https://", "mailto:")
# `docs/x.md`, "Section" / `docs/x.md` ("Section" / README, "Section"
SECTION = re.compile(r'(?:`([\w./-]+\.md)`|(README))[,:]? \(?"([^"]+)"')
MARKDOWN_FILE = re.compile(r"`((?:docs/)?[\w-]+\.md|README\.md)`")


def prose(text: str) -> str:
    """The page without its fenced code blocks (their brackets are code, not links)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*_~]|<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(prose(page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken(page: Path) -> list[str]:
    out = []
    text = INLINE_CODE.sub("", prose(page.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if target.startswith(EXTERNAL):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            out.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            out.append(f"{target}: no heading #{anchor} in {file.name}")
    return out + _named(page, prose(page.read_text(encoding="utf-8")))


def _named(page: Path, text: str) -> list[str]:
    """Sections and Markdown files the prose names (paths from the repository root)."""
    out = []
    for path, readme, title in SECTION.findall(text):
        file = REPO / (path or "README.md")
        # a section is named by its heading's first words ("Revising" for "Revising: what
        # a correction does ...")
        if file.exists() and not any(a.startswith(slug(title)) for a in anchors(file)):
            out.append(f'{path or readme}, "{title}": no such heading')
    for path in MARKDOWN_FILE.findall(text):
        if "/" in path and not (REPO / path).exists():
            out.append(f"{path}: no such file")
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_resolves(page: Path):
    assert broken(page) == []


def test_the_check_sees_a_broken_anchor_and_file(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Agents: an MCP server, or the shell\n\n[ok](#agents-an-mcp-server-or-the-shell) "
        "[gone](#agent-frameworks) [file](missing.md) `[code](x.md)`\n\n```\n[no](y.md)\n```\n"
    )
    assert [b.split(":")[0] for b in broken(page)] == ["#agent-frameworks", "missing.md"]
    page.write_text('See (README, "Agent frameworks") and `docs/nothing-here.md`.\n')
    assert broken(page) == [
        'README, "Agent frameworks": no such heading',
        "docs/nothing-here.md: no such file",
    ]
