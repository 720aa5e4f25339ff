"""Deprecated public names: each keeps a thin wrapper for one release that warns and
names its replacement (docs/rewards.md, "Deprecated verbs").

The warning is a ``DeprecationWarning`` pointed at the caller's line
(``stacklevel=2`` from the wrapper the caller called), so the caller sees where to change.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new``, at the line that called the
    wrapper calling this (``stacklevel`` 3: this function, the wrapper, its caller)."""
    message = f"{old} is deprecated and goes in the next release; use {new} instead."
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)


def deprecated(old: str, new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate ``old``'s function: each call warns that it is deprecated for ``new``."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def warned(*args: P.args, **kwargs: P.kwargs) -> R:
            moved(old, new)
            return function(*args, **kwargs)

        return warned

    return wrap
