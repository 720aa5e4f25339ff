"""Tests go through public doors (issue 43): a test reads a private attribute only where
the test is about that private thing, and the line says why: ``# private: <why>``. At
most :data:`MAX_PRIVATE_READS` remain in ``tests/``.

What counts, in every ``tests/**/*.py`` (this one's planted samples aside), whoever owns
the attribute (the project, a library, a test helper's own class):

- an attribute ``x._name``: one leading underscore, not a dunder, not ``_`` alone;
- ``from module import _name``;
- ``"_name"`` handed to ``getattr``/``setattr``/``hasattr``/``delattr`` (monkeypatch's
  too), or ``"package.module._name"`` to ``monkeypatch.setattr``/``delattr``.

A test that needs a Pack's services reaches them through
``tests.support.internals.services_of``, the one commented read of ``Pack._svc``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_PRIVATE_READS = 15
_ACCESSORS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
_REASON = re.compile(r"#.*\bprivate:\s*\S")


def is_private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and name != "_" and not dunder


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _named_by_string(node: ast.Call) -> str | None:
    """The private attribute a getattr-like call names with a string literal, if any:
    ``setattr(obj, "_name", ...)``, or monkeypatch's ``setattr("pkg.mod._name", ...)``."""
    if _called(node) not in _ACCESSORS:
        return None
    texts = [a.value if isinstance(a, ast.Constant) else None for a in node.args[:2]]
    first = texts[0] if texts else None
    if isinstance(first, str) and "." in first:
        name = first.rpartition(".")[2]
    elif len(texts) == 2 and isinstance(texts[1], str):
        name = texts[1]
    else:
        return None
    return name if is_private(name) else None


def private_reads(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each private read in ``source`` (the line its name is on)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            found.append((node.end_lineno or node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            found += [(a.lineno, a.name) for a in node.names if is_private(a.name)]
        elif isinstance(node, ast.Call) and (name := _named_by_string(node)):
            found.append((node.lineno, name))
    return sorted(found)


def every_read() -> dict[str, list[tuple[int, str]]]:
    out = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__):
            continue
        out[str(path.relative_to(ROOT))] = private_reads(path.read_text(encoding="utf-8"))
    return out


def test_tests_read_at_most_15_private_attributes():
    reads = [
        f"{path}:{line} {name}" for path, found in every_read().items() for line, name in found
    ]
    assert len(reads) <= MAX_PRIVATE_READS, "\n".join(reads)


def test_each_private_read_says_why_on_its_line():
    silent, stale = [], []
    for path, found in every_read().items():
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        marked = {n for n, text in enumerate(lines, 1) if _REASON.search(text)}
        read_on = {line for line, _ in found}
        silent += [f"{path}:{line} {name}" for line, name in found if line not in marked]
        stale += [f"{path}:{line}" for line in sorted(marked - read_on)]
    assert silent == [], "each private read needs '# private: <why>' on its line"
    assert stale == [], "a '# private:' comment on a line that reads nothing private"


PLANTED = """
from packs.near_duplicates import _fold, settle
import packs.pack as pack_module

def test_planted(pack, monkeypatch):
    pack._svc.recall.vectors
    (
        storage_of(pack)
        ._table("memories")
    )
    getattr(pack, "_closed")
    monkeypatch.setattr(pack_module, "_open_packs", set())
    monkeypatch.setattr("packs.pack._CLOSE_RETRIES", 0)
    pack.__class__, pack.__dict__, pack._, getattr(pack, "name")
    monkeypatch.setattr(pack_module, "log", None)
    pack.__mangled
"""


def test_the_counter_finds_every_kind_of_private_read():
    assert private_reads(PLANTED) == [
        (2, "_fold"),
        (6, "_svc"),
        (9, "_table"),
        (11, "_closed"),
        (12, "_open_packs"),
        (13, "_CLOSE_RETRIES"),
        (16, "__mangled"),
    ]
