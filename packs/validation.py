"""Checks on caller input, shared by every public entry point."""

from __future__ import annotations

import math
import re
from typing import Any

from packs.errors import InvalidInput, InvalidPackName, InvalidReward, TextTooLong

# Letters, digits, '_', '-' and '.', starting with a letter or digit: such a name can't
# hold a path separator, can't be '.' or '..', and is a valid folder and S3 key part.
_PACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_pack_name(name: object) -> str:
    """Return ``name`` if it is a safe Pack name, else raise :class:`InvalidPackName`."""
    if not isinstance(name, str):
        raise InvalidPackName(f"Pack name must be a string, got {type(name).__name__}.")
    if not _PACK_NAME.fullmatch(name) or ".." in name:
        raise InvalidPackName(
            f"Invalid Pack name {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit, with no '..' and no '/'."
        )
    return name


def check_text(value: object, field: str, max_chars: int) -> str:
    """Return ``value`` stripped of outer whitespace, or raise a clear error.

    Text must be a ``str``, non-blank, free of NUL bytes and at most ``max_chars`` long.
    Oversized text is refused, never silently truncated: a caller that stores long
    documents should chunk them first (``add_knowledge``).
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a str, got {type(value).__name__}.")
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL byte; remove it before storing.")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field} is empty or only whitespace.")
    if len(text) > max_chars:
        raise TextTooLong(
            f"{field} has {len(text):,} characters, above the Pack's max_text_chars="
            f"{max_chars:,}. Split it into chunks (add_knowledge) or raise the setting."
        )
    return text


def check_unit_interval(value: object, field: str, low: float = -1.0, high: float = 1.0) -> float:
    """Return ``value`` as a float if it is finite and within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidReward(f"{field} must be a number, got {type(value).__name__}.")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidReward(f"{field} must be finite, got {number!r}.")
    if not low <= number <= high:
        raise InvalidReward(f"{field}={number!r} is outside [{low}, {high}].")
    return number


def check_metadata(metadata: object) -> dict[str, Any]:
    """Metadata is a flat dict of str keys to str/int/float/bool/None values."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"metadata must be a dict, got {type(metadata).__name__}.")
    for key, val in metadata.items():
        if not isinstance(key, str) or not key or "\x00" in key:
            raise InvalidInput(f"metadata key {key!r} must be a non-empty str without NUL.")
        if val is not None and not isinstance(val, str | int | float | bool):
            raise InvalidInput(
                f"metadata[{key!r}] must be str, int, float, bool or None, "
                f"got {type(val).__name__}."
            )
        if isinstance(val, float) and not math.isfinite(val):
            raise InvalidInput(f"metadata[{key!r}] must be finite, got {val!r}.")
        if isinstance(val, str) and "\x00" in val:
            raise InvalidInput(f"metadata[{key!r}] contains a NUL byte.")
    return dict(metadata)
