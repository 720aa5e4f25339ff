"""Eval sets stored with the Pack: the ``eval_sets`` table, one row per named set.

A Pack carries the queries it is judged by, so the scheduled eval runs with no file on
the worker's disk and works the same on a local folder or ``s3://``. The set is kept as
its JSONL text (the format of ``evals/evalset.py``, which parses and checks it when it
is scored); storing a set under an existing name replaces it in one ``merge_insert``
commit. The table is created on first use, like ``eval_runs`` (the store's concern:
``schemas.CREATED_ON_WRITE``).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import pyarrow as pa

from packs.errors import EvalSetNotFound, InvalidInput
from packs.pack import Pack, storage_of
from packs.store.schemas import EVAL_SETS, EVAL_SETS_SCHEMA

MAX_EVAL_SET_BYTES = 16 * 1024 * 1024  # hand-set: thousands of queries, not a corpus


@dataclass(frozen=True)
class StoredEvalSet:
    name: str
    jsonl: str
    digest: str
    source: str | None
    stored_at: datetime


def store_eval_set(pack: Pack, name: str, jsonl: str, source: str | None = None) -> StoredEvalSet:
    """Store ``jsonl`` as eval set ``name`` of ``pack`` (replacing a set of that name)."""
    if not name.strip():
        raise InvalidInput("An eval set needs a non-empty name.")
    if not jsonl.strip():
        raise InvalidInput(f"Eval set {name!r} is empty; expected one JSON object per line.")
    size = len(jsonl.encode("utf-8"))
    if size > MAX_EVAL_SET_BYTES:
        raise InvalidInput(
            f"Eval set {name!r} is {size:,} bytes; the Pack stores at most "
            f"{MAX_EVAL_SET_BYTES:,}. Pass a larger set as a file instead."
        )
    stored = StoredEvalSet(
        name,
        jsonl,
        hashlib.sha256(jsonl.encode("utf-8")).hexdigest(),
        source,
        datetime.now(UTC),
    )
    row = pa.Table.from_pylist([asdict(stored)], schema=EVAL_SETS_SCHEMA)
    storage_of(pack).merge(EVAL_SETS, row, "name", update=True)
    return stored


def stored_eval_sets(pack: Pack) -> list[StoredEvalSet]:
    """Every eval set stored with ``pack``, by name; empty when none was stored."""
    if not storage_of(pack).has_table(EVAL_SETS):
        return []
    storage_of(pack).latest_version(EVAL_SETS)  # sets stored by other handles too
    rows = storage_of(pack).scan(EVAL_SETS, EVAL_SETS_SCHEMA.names).to_pylist()
    return sorted((StoredEvalSet(**row) for row in rows), key=lambda s: s.name)


def read_eval_set(pack: Pack, name: str | None = None) -> StoredEvalSet:
    """The stored set ``name``; with no name, the Pack's only stored set."""
    stored = stored_eval_sets(pack)
    names = [s.name for s in stored]
    if name is None and len(stored) == 1:
        return stored[0]
    if name is not None and name in names:
        return stored[names.index(name)]
    fix = (
        "Pass an eval set file (JSONL), or store one with the Pack: "
        "`wolfie eval --eval-set FILE --store`, or load a bundle that has an eval_set.jsonl."
    )
    if not stored:
        raise EvalSetNotFound(f"Pack {pack.name!r} stores no eval set. {fix}")
    if name is None:
        raise EvalSetNotFound(
            f"Pack {pack.name!r} stores {len(stored)} eval sets ({', '.join(names)}); "
            "name the one to score."
        )
    raise EvalSetNotFound(
        f"Pack {pack.name!r} stores no eval set {name!r}; it stores {', '.join(names)}. {fix}"
    )
