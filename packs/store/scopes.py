"""Scopes: one Pack serving many users or sessions without leaking memories between them.

A scope is stored as the metadata key ``scope`` of a memory or chunk. Rows that carry a
scope also carry the tag :data:`SCOPED_TAG`, which no metadata item can produce (metadata
tags always hold a ``=``), so "shared" (no scope) is one indexed test, not a scan of
JSON.

Visibility, enforced in the ``where`` clause of every recall and search:

- a caller in scope ``S`` sees the rows of ``S`` and the shared rows;
- a caller without a scope sees the shared rows only.

A memory's id and its near-duplicate search are per scope too, so the same words
remembered by two users stay two memories.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from packs.errors import InvalidInput
from packs.store.filters import sql_literal, tag
from packs.validation import check_unicode, shown

SCOPE_KEY = "scope"
SCOPED_TAG = "wolfie:scoped"  # has no "=": no metadata item can collide with it
MAX_SCOPE_CHARS = 256


def check_scope(scope: object) -> str | None:
    """``None`` (shared) or a non-empty str of at most :data:`MAX_SCOPE_CHARS`."""
    if scope is None:
        return None
    if not isinstance(scope, str) or not scope.strip():
        raise InvalidInput(f"scope must be a non-empty str or None, got {shown(scope)}.")
    if len(scope) > MAX_SCOPE_CHARS or "\x00" in scope:
        raise InvalidInput(f"scope must be at most {MAX_SCOPE_CHARS} characters without NUL bytes.")
    return check_unicode(scope, "scope")


def scoped_metadata(metadata: Mapping[str, Any], scope: str | None) -> dict[str, Any]:
    """``metadata`` with the scope stored under :data:`SCOPE_KEY`.

    A ``scope`` key already in ``metadata`` must agree: it can't be used to write into
    another user's scope.
    """
    meta = dict(metadata)
    given = meta.get(SCOPE_KEY)
    if scope is None:
        if given is not None:
            check_scope(given)
        return meta
    if given is not None and given != scope:
        raise InvalidInput(
            f"metadata scope {given!r} differs from the call's scope {scope!r}; "
            "pass the scope once, as scope=."
        )
    meta[SCOPE_KEY] = scope
    return meta


def scope_tags(metadata: Mapping[str, Any]) -> list[str]:
    """The extra tag a scoped row carries (none for a shared row)."""
    return [SCOPED_TAG] if metadata.get(SCOPE_KEY) is not None else []


def own_clause(scope: str) -> str:
    """Rows of ``scope`` itself (part of every ``visible_clause(scope)``)."""
    return f"array_has(tags, {sql_literal(tag(SCOPE_KEY, scope))})"


def visible_clause(scope: str | None) -> str:
    """Rows a caller in ``scope`` may see: its own scope and the shared rows.

    Every row carries a ``tags`` list (``[]`` without metadata; ``packs/store/rows.py``
    has written one since the first schema), so there is no ``tags IS NULL`` arm: it was
    the one part of the clause that maintenance's LABEL_LIST index can't answer, and it
    made LanceDB read every row's tags for every filtered search (docs/recall.md).
    """
    shared = f"NOT array_has(tags, {sql_literal(SCOPED_TAG)})"
    if scope is None:
        return f"({shared})"
    return f"({shared} OR {own_clause(scope)})"


def recalled_in_clause(scope: str) -> str:
    """Episodes recalled in ``scope``: their stored filter holds its visibility test (a
    scope's literal can't hide in another's: quotes inside a literal are doubled)."""
    return f"strpos(filter_json, {sql_literal(own_clause(scope))}) > 0"


def same_scope_clause(scope: str | None) -> str:
    """Rows of exactly ``scope`` (the shared rows for ``None``): where duplicates live."""
    if scope is None:
        return visible_clause(None)
    return own_clause(scope)


# An ``array_has(tags, '<literal>')`` test in a stored filter (own_clause's form).
_TAG_TEST = re.compile(r"array_has\(tags, '((?:[^']|'')*)'\)")


# The visibility test a recall's stored filter starts with (visible_clause's form; Packs
# of schema 2 before issue 24 wrote a "tags IS NULL OR " arm first).
_VISIBLE_PREFIX = re.compile(
    r"\((?:tags IS NULL OR )?NOT array_has\(tags, 'wolfie:scoped'\)"
    r"(?: OR array_has\(tags, '((?:[^']|'')*)'\))?\)"
)


def episode_scope(filter_json: str | None) -> str | None:
    """The scope an episode was recalled in, from its stored filter, which always starts
    with the caller's visibility test (:func:`visible_clause`, written by the recall
    itself, before any filter of the caller's); None for a shared recall or a filter of
    another form."""
    match = _VISIBLE_PREFIX.match(filter_json or "")
    if match is None or match.group(1) is None:
        return None
    value = match.group(1).replace("''", "'")
    prefix = f"{SCOPE_KEY}="
    return value[len(prefix) :] if value.startswith(prefix) else None


def scope_digest(scope: str, salt: str | None) -> str:
    """A scope as a forget's tombstone keeps it: a digest, never the name itself, keyed by
    the Pack's own random ``salt`` (:func:`packs.store.tombstones.forget_salt`), so a
    guessed user id can't be confirmed against a tombstone without the Pack's settings.
    ``None``: the unsalted form of Packs forgotten in before the salt (issue 31)."""
    data = scope.encode("utf-8")
    if salt is None:
        return "sd_" + hashlib.blake2b(data, digest_size=16).hexdigest()
    return "ss_" + hashlib.blake2b(data, digest_size=16, key=bytes.fromhex(salt)).hexdigest()


def recalled_in(filter_json: str | None, digests: set[str], salts: Sequence[str]) -> bool:
    """Whether an episode whose stored filter is ``filter_json`` was recalled in one of
    the scopes whose :func:`scope_digest` (under any of the Pack's ``salts``, or of the
    old unsalted form) is in ``digests``."""
    prefix = f"{SCOPE_KEY}="
    legacy = any(d.startswith("sd_") for d in digests)
    keys: list[str | None] = [*salts, *([None] if legacy else [])]
    for literal in _TAG_TEST.findall(filter_json or ""):
        value = literal.replace("''", "'")
        if value.startswith(prefix):
            scope = value[len(prefix) :]
            if any(scope_digest(scope, key) in digests for key in keys):
                return True
    return False
