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


def deprecated(old: str, new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate ``old``'s function: each call warns that it is deprecated for ``new``."""
    message = f"{old} is deprecated and goes in the next release; use {new} instead."

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def warned(*args: P.args, **kwargs: P.kwargs) -> R:
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return function(*args, **kwargs)

        return warned

    return wrap
