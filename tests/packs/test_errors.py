"""The exception tree drawn at the top of ``packs/errors.py`` is the one the module defines."""

from __future__ import annotations

import inspect

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
