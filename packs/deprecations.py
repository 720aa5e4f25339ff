"""One warning for a public name that moved: it keeps working for one release."""

from __future__ import annotations

import warnings


def moved(old: str, new: str) -> None:
    """Warn, at the caller's caller, that ``old`` is deprecated in favour of ``new``."""
    warnings.warn(
        f"{old} is deprecated and goes in the next release; use {new}.",
        DeprecationWarning,
        stacklevel=3,
    )
