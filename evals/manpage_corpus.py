"""Build the man-page eval corpus from the manual pages installed on this machine.

The corpus is real text: Debian 12's manual pages of everyday command-line tools,
rendered by ``man`` (man-db and groff) without line wrapping and cut into chunks the way
a documentation assistant would index them:

- ``overview``: NAME and SYNOPSIS;
- ``option``: one option entry (its flags and its description);
- ``text``: description paragraphs, merged up to about 60 words within a section;
- ``footer``: AUTHOR, REPORTING BUGS, COPYRIGHT and SEE ALSO. These are the natural hub
  chunks: they name the command, so they look like every question about it, and they
  never answer one.

Option descriptions that repeat across tools (``--help``, ``--version``, ``-v,
--verbose``, ``-k, --keep``...) are the corpus's paraphrased near-duplicates and
plausible wrong neighbours. Chunks longer than 180 words are split at sentences.

How to run (from the repository root)::

    python -m evals.manpage_corpus build --out data/evals/manpages
    python -m evals.manpage_corpus label data/evals/manpages

``build`` writes ``knowledge.jsonl``; ``label`` turns the hand-written
``questions.jsonl`` (answers named as ``cmd:option`` selectors, see :func:`select`) into
the eval set ``queries.jsonl`` with chunk ids.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packs.bundles import read_jsonl
from packs.errors import InvalidInput

COMMANDS = (
    "cp",
    "mv",
    "rm",
    "ls",
    "ln",
    "mkdir",
    "chmod",
    "chown",
    "du",
    "df",
    "sort",
    "uniq",
    "cut",
    "head",
    "tail",
    "wc",
    "tr",
    "split",
    "date",
    "touch",
    "find",
    "grep",
    "sed",
    "tar",
    "gzip",
    "xz",
    "zip",
    "unzip",
    "xargs",
    "diff",
    "ps",
    "kill",
    "timeout",
    "stat",
    "tee",
    "paste",
    "comm",
    "shuf",
    "seq",
    "mktemp",
    "truncate",
)
FOOTER_SECTIONS = {"AUTHOR", "AUTHORS", "REPORTING BUGS", "COPYRIGHT", "SEE ALSO"}
# Sections that list options without explaining them (which version added them...).
MENTION_SECTIONS = {"HISTORY", "STANDARDS CONFORMANCE", "DIAGNOSTICS"}
MAX_WORDS = 180
MERGE_WORDS = 60


@dataclass(frozen=True)
class Chunk:
    command: str
    section: str
    role: str  # overview | option | text | footer
    term: str | None
    body: str

    def text(self) -> str:
        if self.role == "option":
            return f"{self.command} {self.term}\n{self.body}"
        return f"{self.command} ({self.section.lower()}): {self.body}"


def render(command: str) -> str:
    """The manual page as plain text, one line per paragraph."""
    env = {**os.environ, "MANWIDTH": "1000", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    out = subprocess.run(
        ["man", "-P", "cat", "1", command], env=env, capture_output=True, text=True, check=True
    ).stdout
    return re.sub(r".\x08", "", out)  # drop groff overstrike (bold, underline)


def parse(command: str, page: str) -> list[Chunk]:
    """Cut a rendered page into chunks (see the module docstring)."""
    chunks: list[Chunk] = []
    section, sub = "", ""
    term: str | None = None
    lines: list[str] = []
    pending: list[str] = []  # text paragraphs waiting to be merged
    headings: list[str] = []  # the sections ``pending`` came from
    role = ["text"]  # the role of what ``pending`` holds

    def flush_entry() -> None:
        nonlocal term, lines
        body = " ".join(" ".join(lines).split())
        if term is not None:
            chunks.append(Chunk(command, section, "option", term, body or term))
        elif body:
            if not pending:
                role[0] = _role(section)
            pending.append(body)
            heading = f"{section} {sub}".strip()
            if heading not in headings:
                headings.append(heading)
            merged = len(" ".join(pending).split())
            if _role(section) == "text" and merged >= MERGE_WORDS:
                flush_text()
        term, lines = None, []

    def flush_text() -> None:
        if pending:
            chunks.append(Chunk(command, ", ".join(headings), role[0], None, " ".join(pending)))
            pending.clear()
            headings.clear()

    body_lines = page.splitlines()[1:-1]  # the first and last lines are running heads
    for index, raw in enumerate(body_lines):
        stripped = raw.strip()
        previous = body_lines[index - 1] if index else ""
        indent = len(raw) - len(raw.lstrip())
        if not stripped:
            if term is None:
                flush_entry()
            continue
        if indent == 0 or (indent <= 4 and not stripped.startswith("-")):
            flush_entry()
            new_section = stripped if indent == 0 else section
            if _role(new_section) == "text" or _role(new_section) != _role(section):
                flush_text()
            section, sub = (stripped, "") if indent == 0 else (section, stripped)
        elif indent <= 8 and stripped[0] in "-+" and len(stripped) > 1:
            new_term, rest = _split_term(stripped)
            if term is not None and not lines and previous.strip():
                term = f"{term}, {new_term}"  # "-a" then "--ascii" on the next line
            else:
                flush_entry()
                flush_text()
                term = new_term
            lines = [rest] if rest else []
        elif indent <= 8 and term is not None:
            flush_entry()
            lines = [stripped]
        else:
            lines.append(stripped)
    flush_entry()
    flush_text()
    return [piece for chunk in chunks for piece in _split_long(chunk)]


def _role(section: str) -> str:
    if section in ("NAME", "SYNOPSIS"):
        return "overview"
    return "footer" if section in FOOTER_SECTIONS else "text"


def _split_term(line: str) -> tuple[str, str]:
    """``-b     like --backup`` -> (``-b``, ``like --backup``); a bare term has no text."""
    parts = re.split(r"\s{2,}", line, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (line, "")


def _split_long(chunk: Chunk) -> Iterator[Chunk]:
    words = chunk.body.split()
    if len(words) <= MAX_WORDS:
        yield chunk
        return
    sentences = re.split(r"(?<=[.;:])\s+", chunk.body)
    piece: list[str] = []
    for sentence in sentences:
        if piece and len(" ".join([*piece, sentence]).split()) > MAX_WORDS * 2 // 3:
            yield Chunk(chunk.command, chunk.section, chunk.role, chunk.term, " ".join(piece))
            piece = []
        piece.append(sentence)
    if piece:
        yield Chunk(chunk.command, chunk.section, chunk.role, chunk.term, " ".join(piece))


def build(commands: Sequence[str], out: Path) -> int:
    """Write ``knowledge.jsonl`` (a bundle) for ``commands``; returns the chunk count."""
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (out / "knowledge.jsonl").open("w", encoding="utf-8") as handle:
        for command in commands:
            for position, chunk in enumerate(parse(command, render(command))):
                title = f"{command}(1) {chunk.term or chunk.section}"
                meta = {"command": command, "section": chunk.section, "role": chunk.role}
                if chunk.term:
                    meta["term"] = chunk.term
                row = {
                    "source": f"man/{command}.1",
                    "position": position,
                    "title": title,
                    "text": chunk.text(),
                    "metadata": meta,
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
    return count


def select(rows: Sequence[dict[str, object]], selector: str) -> list[str]:
    """Refs (``source#position``) of the chunks a selector names.

    ``cmd:--flag`` or ``cmd:-f``: the option entries listing that flag (outside
    ``MENTION_SECTIONS``, which only mention options); ``cmd:#role``: every
    chunk of that role (``#overview``); ``cmd:~words``: the chunk whose text contains
    ``words`` (case-insensitive). A selector must match at least one chunk.
    """
    command, _, what = selector.partition(":")
    own = [r for r in rows if r["metadata"]["command"] == command]  # type: ignore[index]
    if what.startswith("#"):
        found = [r for r in own if r["metadata"]["role"] == what[1:]]  # type: ignore[index]
    elif what.startswith("~"):
        found = [r for r in own if what[1:].lower() in str(r["text"]).lower()]
    else:
        found = [
            r
            for r in own
            if what in _flags(str(r["metadata"].get("term", "")))  # type: ignore[attr-defined]
            and r["metadata"]["section"] not in MENTION_SECTIONS  # type: ignore[index]
        ]
    if not found:
        raise InvalidInput(f"Selector {selector!r} matches no chunk.")
    return [f"{r['source']}#{r['position']}" for r in found]


def _flags(term: str) -> set[str]:
    """The flags an option term lists: ``-e PATTERNS, --regexp=PATTERNS`` -> -e, --regexp."""
    return set(re.findall(r"(?<![\w-])(--?[\w#?@$!][\w-]*)", term))


def split_of(query_id: str, heldout_share: float = 0.3) -> str:
    """A fixed pseudo-random split by id hash: about 30% held out, stable across edits."""
    bucket = int(hashlib.sha256(query_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "heldout" if bucket < heldout_share else "train"


Selector = Callable[[Sequence[dict[str, Any]], str], list[str]]


def label(folder: Path, selector: Selector | None = None) -> int:
    """Write ``queries.jsonl`` from ``questions.jsonl`` and ``knowledge.jsonl``; each
    answer is resolved to chunk ids by ``selector`` (this corpus's :func:`select`)."""
    select_ids = selector or select
    rows = [obj for _, obj in read_jsonl(folder / "knowledge.jsonl")]
    count = 0
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for number, q in read_jsonl(folder / "questions.jsonl"):
            try:
                refs = [ref for s in q["answers"] for ref in select_ids(rows, s)]
            except InvalidInput as exc:
                raise InvalidInput(f"questions.jsonl:{number}: {exc}") from exc
            line = {
                "id": q["id"],
                "query": q["query"],
                "relevant": list(dict.fromkeys(refs)),
                "split": q.get("split") or split_of(q["id"]),
                "metadata": {"answers": q["answers"]},
            }
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.manpage_corpus", description=__doc__)
    sub = parser.add_subparsers(dest="step", required=True)
    build_cmd = sub.add_parser("build")
    build_cmd.add_argument("--out", type=Path, default=Path("data/evals/manpages"))
    build_cmd.add_argument("commands", nargs="*", default=list(COMMANDS))
    label_cmd = sub.add_parser("label")
    label_cmd.add_argument("folder", type=Path, nargs="?", default=Path("data/evals/manpages"))
    args = parser.parse_args(argv)
    if args.step == "build":
        print(f"Wrote {build(args.commands, args.out)} chunks to {args.out / 'knowledge.jsonl'}")
    else:
        print(f"Wrote {label(args.folder)} queries to {args.folder / 'queries.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
