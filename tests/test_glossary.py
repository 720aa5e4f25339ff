"""The glossary of docs/architecture.md holds for the code (issue 43: one word, one meaning).

Names are read with ``ast`` from ``packs/`` and ``wolfie/`` (nothing is imported): a
module's public functions, classes and assignments, and a class's public methods,
properties and fields, each as ``name``, ``Class.member`` and ``module.name``. A name
whose body warns (``warnings.warn`` or ``packs.records._renamed``) is a deprecated alias.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
CODE = ("packs", "wolfie")
NAME = r"`([A-Za-z_][\w.]*)`"
RENAME = re.compile(NAME + r" → " + NAME + r" \((deprecated alias|pending)\)")


def _warns(node: ast.AST) -> bool:
    """A function (a method, a property) that warns: a deprecated alias."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    calls = (n for n in ast.walk(node) if isinstance(n, ast.Call))
    return any(
        (isinstance(c.func, ast.Attribute) and c.func.attr == "warn")
        or (isinstance(c.func, ast.Name) and c.func.id in {"warn", "_renamed"})
        for c in calls
    )


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def public_names() -> dict[str, bool]:
    """Every public name -> whether it is only a deprecated alias (False if any
    definition of that spelling is a live one)."""
    found: dict[str, bool] = {}

    def add(name: str, node: ast.stmt) -> None:
        if not name.split(".")[-1].startswith("_"):
            found[name] = found.get(name, True) and _warns(node)

    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            module = path.stem
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                for name in _targets(node):
                    add(name, node)
                    add(f"{module}.{name}", node)
                if isinstance(node, ast.ClassDef):
                    for member in node.body:
                        for name in _targets(member):
                            add(f"{node.name}.{name}", member)
    return found


def glossary() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    cells = [re.split(r"(?<!\\)\|", row.strip().strip("|")) for row in rows[1:]]
    assert all(len(c) == 4 for c in cells), "word | meaning | carried by | other meanings"
    return [[c.strip() for c in row] for row in cells]


def test_the_glossary_gives_each_word_of_issue_43_one_row():
    words = [row[0] for row in glossary()]
    assert len(words) == len(set(words))
    for word in ("record", "search", "query", "outcome", "source", "validate", "forget"):
        assert word in words
    for word in ("utility", "track record", "ranked utility", "episode", "scope", "lesson"):
        assert word in words
    assert "slate" in words


def test_every_name_that_carries_a_meaning_exists():
    names = public_names()
    carried = [n for row in glossary() for n in re.findall(NAME, row[2])]
    assert len(carried) >= 30
    missing = [n for n in carried if n not in names]
    assert missing == [], "renamed? update docs/architecture.md's glossary"
    retired = [n for n in carried if names[n]]
    assert retired == [], "a deprecated alias can't carry a meaning"


def test_a_retired_name_is_gone_or_a_deprecated_alias_and_a_pending_one_still_waits():
    names = public_names()
    renames = [m for row in glossary() for m in RENAME.findall(row[3])]
    assert len(renames) >= 10
    for old, new, how in renames:
        if how == "deprecated alias":
            assert names.get(old, True), f"{old} is live: make it warn, or drop it"
            assert new in names and not names[new], f"{new} is missing"
        else:  # another helper of issue 43 renames it; once done, say so in the glossary
            assert old in names, f"{old} was renamed: mark it done in the glossary"


def test_the_deprecated_aliases_warn_and_give_the_same_value():
    from packs.records import FeedbackResult, RecalledItem

    item = RecalledItem(
        *("m", "memory", "text", None, None),
        *(0.9, 0.2, 0.4, 0.5, 1.0, 0.0),
        *(1, 1, None, False),
    )
    with pytest.warns(DeprecationWarning, match="track_record"):
        assert item.utility == item.track_record == 0.4
    result = FeedbackResult("ep", "explicit", 1.0, 1, False, {"m": 0.3}, {"m": 0.2})
    with pytest.warns(DeprecationWarning, match="track_records"):
        assert result.utilities == result.track_records == {"m": 0.3}
    with pytest.warns(DeprecationWarning, match="Judgement"):
        from packs.admission.compare import Judgement, Verdict
    assert Verdict is Judgement
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert item.track_record == 0.4 and "utility" not in item.to_dict()
