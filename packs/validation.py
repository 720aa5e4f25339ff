"""Checks on caller input, shared by every public entry point."""

from __future__ import annotations

import json
import math
import re
import reprlib
from datetime import UTC, datetime, timedelta
from typing import Any

from packs.errors import (
    InvalidInput,
    InvalidPackName,
    InvalidReward,
    MetadataTooLarge,
    TextTooLong,
)

# Letters, digits, '_', '-' and '.', starting with a letter or digit: such a name can't
# hold a path separator, can't be '.' or '..', and is a valid folder and S3 key part.
_PACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# Hand-set bounds on metadata (docs/settings.md): generous for ids, symbols and short
# labels, far below what would bloat the tags index.
MAX_METADATA_KEYS = 64
MAX_METADATA_KEY_CHARS = 256
MAX_METADATA_VALUE_CHARS = 8_192
# Items one recall returns, at every door (hand-set: a prompt holds a few; 100 is plenty).
MAX_K = 100
# The integers a Pack stores: Arrow's int64, the widest integer column LanceDB has. Python
# itself can't print an int of more than 4,300 digits (sys.int_info), which is how a
# 5,000-digit metadata value used to fail, as a bare ValueError.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
# Nesting of a JSON value a door parses (hand-set: metadata and filters are flat; a list
# of values is depth 2). Python's parser raises RecursionError near 1,000 levels.
MAX_JSON_DEPTH = 32


class _Shown(reprlib.Repr):
    """A repr bounded in depth (3 levels) and length (80 characters a string)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother = 3, 80, 80

    def repr_int(self, x: int, level: int) -> str:
        if not MIN_INT <= x <= MAX_INT:  # repr() itself fails past 4,300 digits
            return f"<an integer of {x.bit_length():,} bits>"
        return repr(x)


_SHOWN = _Shown()


def shown(value: object) -> str:
    """``value`` for an error message: a bounded repr, safe for any nesting or size (a
    plain ``repr`` of a 50,000-deep list raises RecursionError, of a huge int ValueError)."""
    return _SHOWN.repr(value)


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


def lone_surrogate(text: str) -> int | None:
    """The position of the first lone surrogate in ``text`` (what invalid UTF-8 in argv,
    or a JSON ``"\\udce9"``, becomes in Python), else None. Such text can't be encoded
    as UTF-8, so no table can store it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def check_unicode(value: str, field: str) -> str:
    """``value`` if it is valid Unicode (no lone surrogate), else :class:`InvalidInput`."""
    at = lone_surrogate(value)
    if at is not None:
        raise InvalidInput(
            f"{field} is not valid Unicode: character {at} is a lone surrogate "
            f"{value[at]!r} (invalid UTF-8 on a command line, or a JSON '\\u' escape of "
            "half a pair). Pass UTF-8 text."
        )
    return value


MAX_POSITION = 2**63 - 1  # a chunk's position is stored as int64 (the column's range)


def check_position(value: object) -> int:
    """A knowledge chunk's position: an int from 0 to :data:`MAX_POSITION` (a larger one
    can't be stored: it failed deep in Arrow, issue 42)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"chunk position must be an int, got {shown(value)}.")
    if not 0 <= value <= MAX_POSITION:
        raise InvalidInput(f"chunk position must be from 0 to 2**63 - 1, got {shown(value)}.")
    return value


def check_title(value: object, max_chars: int) -> str | None:
    """A knowledge chunk's title: None (or blank: none), else text within ``max_chars``
    (the Pack's ``max_text_chars``: what an import of the Pack's own export accepts)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return check_text(value, "chunk title", max_chars)


def check_text(value: object, field: str, max_chars: int) -> str:
    """Return ``value`` stripped of outer whitespace, or raise a clear error.

    Text must be a ``str``, valid Unicode (:func:`check_unicode`), non-blank, free of NUL
    bytes and at most ``max_chars`` long. Oversized text is refused, never silently
    truncated: a caller that stores long documents should chunk them first
    (``add_knowledge``). Every free-text input passes here before anything is buffered.
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a str, got {type(value).__name__}.")
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL byte; remove it before storing.")
    check_unicode(value, field)
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field} is empty or only whitespace.")
    if len(text) > max_chars:
        raise TextTooLong(
            f"{field} has {len(text):,} characters, above the Pack's max_text_chars="
            f"{max_chars:,}. Split it into chunks (add_knowledge) or raise the setting."
        )
    return text


def check_int(value: int, field: str) -> int:
    """``value`` if it fits a stored integer (int64), else :class:`InvalidInput`."""
    if not MIN_INT <= value <= MAX_INT:
        raise InvalidInput(
            f"{field} is an integer of {value.bit_length()} bits; a Pack stores integers of "
            "at most 64 bits (signed). Store a larger number as text."
        )
    return value


def parse_json(text: str, field: str) -> Any:
    """``text`` parsed as JSON, or :class:`InvalidInput` naming ``field``: for invalid
    JSON, and for what Python can't take (an integer beyond int64, nesting deeper than
    :data:`MAX_JSON_DEPTH`, NaN or Infinity, a lone surrogate escape). The one parser of
    the doors' JSON options (``--metadata``, ``--where``)."""
    try:
        value = json.loads(text, parse_int=_bounded_int(field), parse_constant=_no_constant)
    except RecursionError:
        raise InvalidInput(
            f"{field} is nested too deeply to read; pass a flat JSON object."
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{field} is not valid JSON ({exc.msg}).") from None
    check_json_value(value, field)
    return value


def _bounded_int(field: str) -> Any:
    def parse(digits: str) -> int:
        if len(digits.lstrip("-")) > 20:  # int64 has 19 digits: never a 4,301-digit parse
            raise InvalidInput(
                f"{field} holds an integer of {len(digits):,} digits; a Pack stores "
                "integers of at most 64 bits."
            )
        return check_int(int(digits), field)

    return parse


def _no_constant(name: str) -> float:
    raise InvalidInput(f"JSON has no {name}; pass a finite number.")


def check_json_value(value: object, field: str, max_depth: int = MAX_JSON_DEPTH) -> object:
    """``value`` (dicts, lists, str, int, float, bool, None) if it nests at most
    ``max_depth`` levels, its integers fit int64, its floats are finite and its strings
    valid Unicode; walked without recursion, so no depth can crash the check itself."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            raise InvalidInput(f"{field} nests deeper than {max_depth} levels; pass flat values.")
        if isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            check_int(item, field)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidInput(f"{field} holds {item!r}; pass finite numbers.")
        elif isinstance(item, str):
            check_unicode(item, field)
        else:
            raise InvalidInput(f"{field} holds a {type(item).__name__}; pass JSON values.")
    return value


def utc_instant(value: datetime, field: str) -> datetime:
    """An aware ``value`` as one instant in UTC, reading its offset once: a tzinfo whose
    offset changes between calls, one that raises, or a date that leaves Python's range
    in UTC (year 9999 west of Greenwich) is :class:`InvalidInput`, never another error."""
    try:
        offset = value.utcoffset()  # a tzinfo is caller code: any error is the caller's
    except Exception as exc:  # noqa: BLE001 - turned into the caller's InvalidInput
        raise InvalidInput(f"{field}'s time zone failed: {shown(exc)}.") from None
    if offset is None:
        raise InvalidInput(
            f"{field} {value.replace(tzinfo=None).isoformat()} has no time zone; pass an "
            "aware datetime (e.g. with tzinfo=UTC) so it means one instant."
        )
    try:
        return (value.replace(tzinfo=None) - offset).replace(tzinfo=UTC)
    except OverflowError:
        raise InvalidInput(
            f"{field} {value.replace(tzinfo=None).isoformat()} at UTC{_hours(offset)} is "
            "outside the years 1-9999 in UTC."
        ) from None


def _hours(offset: timedelta) -> str:
    return f"{offset.total_seconds() / 3600:+g}h"


def check_unit_interval(value: object, field: str, low: float = -1.0, high: float = 1.0) -> float:
    """Return ``value`` as a float if it is finite and within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidReward(f"{field} must be a number, got {type(value).__name__}.")
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise InvalidReward(
            f"{field} must be a finite number in [{low:g}, {high:g}], got {shown(value)}."
        )
    return number


def check_k(k: object) -> int | None:
    """``None`` (the Pack's k2) or an int from 1 to :data:`MAX_K`: every door's bound."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be an integer from 1 to {MAX_K}, got {shown(k)}.")
    return k


def check_episode_id(episode_id: object) -> str:
    """The non-empty id a recall returned (surrounding blanks dropped)."""
    if not isinstance(episode_id, str) or not episode_id.strip():
        raise InvalidInput(
            f"episode_id must be the non-empty id that recall returned, got {shown(episode_id)}."
        )
    return episode_id.strip()


def check_memory_ids(memory_ids: object) -> list[str] | None:
    """``None`` (every injected memory) or a non-empty list of memory id strings, each
    once (a repeated id is one memory, rewarded once)."""
    if memory_ids is None:
        return None
    if isinstance(memory_ids, str | bytes) or not isinstance(memory_ids, list | tuple):
        raise InvalidInput(
            f"memory_ids must be a list of memory id strings, got {shown(memory_ids)}."
        )
    if not all(isinstance(m, str) and m for m in memory_ids):
        raise InvalidInput(
            f"memory_ids must be a list of memory id strings, got {shown(memory_ids)}."
        )
    if not memory_ids:
        raise InvalidInput("memory_ids is empty; leave it out to reward the whole episode.")
    return list(dict.fromkeys(memory_ids))


def check_seconds(value: object, field: str) -> float | None:
    """``None``, or a finite, non-negative time in seconds (a chunk's ``start_s``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{field} must be a number of seconds or None, got {shown(value)}.")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise InvalidInput(f"{field} must be finite and >= 0 seconds, got {number!r}.")
    return number


def check_metadata(metadata: object) -> dict[str, Any]:
    """Metadata is a flat dict of str keys to str/int/float/bool/None values, of at most
    :data:`MAX_METADATA_KEYS` keys, each at most :data:`MAX_METADATA_KEY_CHARS` long, and
    string values of at most :data:`MAX_METADATA_VALUE_CHARS` (every item is also a tag
    stored and indexed with the row)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"metadata must be a dict, got {type(metadata).__name__}.")
    if len(metadata) > MAX_METADATA_KEYS:
        raise MetadataTooLarge(
            f"metadata has {len(metadata):,} keys, above the bound of {MAX_METADATA_KEYS}; "
            "keep filterable facts in metadata and the rest in the text."
        )
    for key, val in metadata.items():
        if not isinstance(key, str) or not key or "\x00" in key:
            raise InvalidInput(f"metadata key {shown(key)} must be a non-empty str without NUL.")
        check_unicode(key, f"metadata key {key!r}")
        if len(key) > MAX_METADATA_KEY_CHARS:
            raise MetadataTooLarge(
                f"metadata key {key[:40]!r}... has {len(key):,} characters, above the bound "
                f"of {MAX_METADATA_KEY_CHARS}."
            )
        if isinstance(val, str) and len(val) > MAX_METADATA_VALUE_CHARS:
            raise MetadataTooLarge(
                f"metadata[{key[:40]!r}] has {len(val):,} characters, above the bound of "
                f"{MAX_METADATA_VALUE_CHARS:,}; store long text as the memory or a chunk."
            )
        if val is not None and not isinstance(val, str | int | float | bool):
            raise InvalidInput(
                f"metadata[{key!r}] must be str, int, float, bool or None, "
                f"got {type(val).__name__}."
            )
        if isinstance(val, int) and not isinstance(val, bool):
            check_int(val, f"metadata[{key[:40]!r}]")
        if isinstance(val, float) and not math.isfinite(val):
            raise InvalidInput(f"metadata[{key!r}] must be finite, got {val!r}.")
        if isinstance(val, str) and "\x00" in val:
            raise InvalidInput(f"metadata[{key!r}] contains a NUL byte.")
        if isinstance(val, str):
            check_unicode(val, f"metadata[{key!r}]")
    return dict(metadata)
