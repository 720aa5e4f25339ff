"""The exception tree drawn at the top of ``packs/errors.py`` is the one the module defines."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import packs.errors as errors


def drawn_tree() -> list[str]:
    classes = [
        c
        for c in vars(errors).values()
        if inspect.isclass(c) and issubclass(c, Exception) and c.__module__ == errors.__name__
    ]
    lines: list[str] = []

    def walk(cls: type, depth: int) -> None:
        builtin = [b.__name__ for b in cls.__bases__ if b.__module__ == "builtins"]
        lines.append("  " * depth + cls.__name__ + (f" ({', '.join(builtin)})" if builtin else ""))
        for sub in classes:
            if sub.__bases__[0] is cls:
                walk(sub, depth + 1)

    walk(errors.WolfieError, 0)
    assert len(lines) == len(classes), "every error derives from WolfieError"
    return lines


def test_the_docstring_draws_every_error_under_its_first_base():
    doc = errors.__doc__ or ""
    drawn = [line[4:] for line in doc.splitlines() if line.startswith("    ")]
    assert drawn == drawn_tree()
    assert "  PackNotFound (LookupError)" in drawn and "NoSuchPack" not in doc


ROOT = Path(__file__).resolve().parents[2]
# The folders whose code raises Wolfie's errors (the modules mypy checks).
CODE = ("packs", "wolfie", "tasks", "flows", "evals", "deployments")


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):  # errors.InvalidInput
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def wolfie_errors_defined() -> set[tuple[str, str]]:
    """Every class under :data:`CODE` that derives from ``WolfieError`` (by its bases'
    names, to a fixed point), as (path, name), read with ``ast``: nothing is imported."""
    classes: list[tuple[str, str, set[str]]] = []
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = path.relative_to(ROOT).as_posix()
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    bases = {_base_name(b) for b in node.bases}
                    classes.append((where, node.name, bases))
    errors_of, grew = {"WolfieError"}, True
    while grew:
        found = {name for _, name, bases in classes if bases & errors_of}
        grew = not found <= errors_of
        errors_of |= found
    return {(where, name) for where, name, bases in classes if bases & errors_of}


def test_every_wolfie_error_is_defined_in_the_drawn_tree():
    """An error class elsewhere would escape the drawing: each lives in packs/errors.py
    (the modules that raised them re-export them, so old imports keep working)."""
    defined = wolfie_errors_defined()
    outside = {(where, name) for where, name in defined if where != "packs/errors.py"}
    assert outside == set()
    in_errors = {name for where, name in defined if where == "packs/errors.py"}
    assert in_errors == {line.strip().split(" (")[0] for line in drawn_tree()} - {"WolfieError"}


def test_the_moved_errors_keep_their_old_import_paths():
    from packs.eval_sets import EvalSetNotFound
    from packs.lessons.writers import LessonWriterError, TransientLessonWriterError
    from packs.transfer.pack_io import PackNotEmpty

    assert EvalSetNotFound is errors.EvalSetNotFound
    assert LessonWriterError is errors.LessonWriterError
    assert TransientLessonWriterError is errors.TransientLessonWriterError
    assert PackNotEmpty is errors.PackNotEmpty
    assert errors.is_transient(TransientLessonWriterError("429"))
