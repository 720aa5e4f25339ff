"""Documents (plain text, Markdown, HTML) into knowledge chunks that follow their headings.

Pure: text in, chunks out. A document becomes a list of blocks (headings and
paragraphs); each section under a heading becomes one chunk, or several when it is
longer than ``max_chars``, split at paragraph, then sentence, then word boundaries.
A chunk's title is its heading path (``Guide > Install > Linux``), and its text starts
with that path, so the embedding knows where the passage sits. Positions count chunks
in document order, so ids (source, position) are stable while the document is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from packs.errors import InvalidInput, SourceNotFound, UnsupportedSource
from packs.ingest.policy import IngestPolicy
from packs.records import KnowledgeChunk

KINDS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
}
# ~250 word pieces of English: what all-MiniLM-L6-v2 embeds before truncating (hand-set).
MAX_CHARS = 1200

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Block:
    level: int  # 1..6 for a heading, 0 for a paragraph
    text: str


@dataclass(frozen=True)
class DocChunk:
    position: int
    title: str
    text: str


def document_kind(path: Path) -> str:
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise UnsupportedSource(
            f"{path.name!r} is not a document this flow reads ({', '.join(sorted(KINDS))}); "
            "media files go through the media flow."
        )
    return kind


def parse(text: str, kind: str) -> list[Block]:
    if kind == "markdown":
        return list(parse_markdown(text))
    if kind == "html":
        return parse_html(text)
    if kind == "text":
        return [Block(0, p) for p in _paragraphs(text)]
    kinds = sorted(set(KINDS.values()))
    raise InvalidInput(f"Unknown document kind {kind!r}; expected one of {kinds}.")


def parse_markdown(text: str) -> Iterator[Block]:
    """ATX (``#``) and setext (underlined) headings; code fences kept whole."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[end + 1 :]
    para: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is not None:
            para.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if match := _FENCE.match(line):
            fence = match.group(1)
            para.append(line)
            continue
        if (match := _SETEXT.match(line)) and len(para) == 1:
            yield Block(1 if match.group(1)[0] == "=" else 2, para.pop().strip())
            continue
        if match := _ATX.match(line):
            yield from _flush(para)
            yield Block(len(match.group(1)), (match.group(2) or "").strip())
            continue
        if line.strip():
            para.append(line.rstrip())
        else:
            yield from _flush(para)
    yield from _flush(para)


def _flush(para: list[str]) -> Iterator[Block]:
    if para:
        yield Block(0, "\n".join(para).strip())
        para.clear()


class _HtmlBlocks(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav"})
    _BLOCK = frozenset(
        {
            "p",
            "div",
            "li",
            "ul",
            "ol",
            "pre",
            "blockquote",
            "table",
            "tr",
            "section",
            "article",
            "main",
            "header",
            "footer",
            "br",
            "hr",
            "dt",
            "dd",
            "figcaption",
            "aside",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title = ""
        self._text: list[str] = []
        self._skip = 0
        self._heading = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self._heading = int(tag[1])
        elif tag in self._BLOCK:
            self._flush()
            if tag == "li":
                self._text.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self._text.append(data)

    def _flush(self) -> None:
        text = " ".join("".join(self._text).split())
        self._text = []
        if text and text != "-":
            self.blocks.append(Block(self._heading, text))
        self._heading = 0


def parse_html(text: str) -> list[Block]:
    parser = _HtmlBlocks()
    parser.feed(text)
    parser.close()
    parser._flush()
    if parser.title.strip() and not any(b.level for b in parser.blocks):
        return [Block(1, " ".join(parser.title.split())), *parser.blocks]
    return parser.blocks


def chunk_blocks(blocks: list[Block], doc_title: str, max_chars: int = MAX_CHARS) -> list[DocChunk]:
    """One chunk per section (split when longer than ``max_chars``), in document order."""
    if max_chars < 200:
        raise InvalidInput(f"max_chars must be at least 200, got {max_chars}.")
    chunks: list[DocChunk] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []

    def close_section() -> None:
        title = " > ".join([doc_title, *(h for _, h in path if h != doc_title)])
        for piece in _pack(body, max_chars - len(title) - 2):
            chunks.append(DocChunk(len(chunks), title, f"{title}\n\n{piece}"))
        body.clear()

    for block in blocks:
        if block.level:
            close_section()
            path = [(lvl, h) for lvl, h in path if lvl < block.level] + [(block.level, block.text)]
        elif block.text.strip():
            body.append(block.text.strip())
    close_section()
    return chunks


def _pack(paragraphs: list[str], limit: int) -> Iterator[str]:
    """Join paragraphs into pieces of at most ``limit`` characters."""
    piece = ""
    for para in (p for text in paragraphs for p in _split(text, limit)):
        if piece and len(piece) + 2 + len(para) > limit:
            yield piece
            piece = ""
        piece = f"{piece}\n\n{para}" if piece else para
    if piece:
        yield piece


def _split(text: str, limit: int) -> Iterator[str]:
    """A paragraph longer than ``limit``: by sentences, then by words."""
    if len(text) <= limit:
        yield text
        return
    piece = ""
    for sentence in _SENTENCE.split(text):
        for word in sentence.split(" ") if len(sentence) > limit else [sentence]:
            if piece and len(piece) + 1 + len(word) > limit:
                yield piece
                piece = ""
            piece = f"{piece} {word}" if piece else word[:limit]
    if piece:
        yield piece


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if p.strip()]


def chunk_document(
    text: str, kind: str, doc_title: str, max_chars: int = MAX_CHARS
) -> list[DocChunk]:
    """Parse and chunk one document's text. The first H1, if any, names the document."""
    blocks = parse(text, kind)
    first = next((b for b in blocks if b.level), None)
    if first is not None and first.level == 1:
        doc_title = first.text
    return chunk_blocks(blocks, doc_title, max_chars)


def read_document(
    path: Path, source: str, max_chars: int = MAX_CHARS, policy: IngestPolicy | None = None
) -> list[KnowledgeChunk]:
    """The knowledge chunks of the file at ``path``, stored under ``source``; under an
    agent's ``policy``, only a file it allows, within its document size limit."""
    kind = document_kind(path)
    if policy is None and not path.is_file():
        raise SourceNotFound(f"No document at {str(path)!r}; check the path.")
    try:
        if policy is None:
            text = path.read_text(encoding="utf-8-sig")
        else:  # opened once, without following links, the descriptor checked
            with policy.open_file(str(path), "document") as (handle, path):
                data = handle.read(policy.max_document_bytes + 1)
            policy.check_size(len(data), source, "document")  # grown since the check
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path.name!r} is not UTF-8 text ({exc}); convert it first.") from exc
    chunks = chunk_document(text, kind, path.stem, max_chars)
    meta = {"kind": "document", "format": kind}
    return [KnowledgeChunk(c.text, source, c.position, c.title, metadata=meta) for c in chunks]
