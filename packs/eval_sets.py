"""Eval sets stored with the Pack: the ``eval_sets`` table, one row per named set.

A Pack carries the queries it is judged by, so the scheduled eval runs with no file on
the worker's disk and works the same on a local folder or ``s3://``. The set is kept as
its JSONL text (the format of ``evals/evalset.py``, which parses and checks it when it
is scored); storing a set under an existing name replaces it in one ``merge_insert``
commit. The table is created on first use, like ``eval_runs``. Reached as
``pack.eval_sets`` (:class:`EvalSets`, built in ``packs/services.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import pyarrow as pa

from packs.deprecation import moved
from packs.errors import EvalSetNotFound, InvalidInput
from packs.store import schemas
from packs.store.gateway import PackStore
from packs.store.schemas import EVAL_SETS, EVAL_SETS_SCHEMA

MAX_EVAL_SET_BYTES = 16 * 1024 * 1024  # hand-set: thousands of queries, not a corpus


@dataclass(frozen=True)
class StoredEvalSet:
    name: str
    jsonl: str
    digest: str
    source: str | None
    stored_at: datetime


class EvalSets:
    """What evals keep with one Pack: its eval sets (save, list, read by name), the
    results of its runs (``eval_runs``, one append a run) and the ``memories`` version a
    run scores (pinned on this handle)."""

    def __init__(self, store: PackStore) -> None:
        self._store = store

    def save(self, name: str, jsonl: str, source: str | None = None) -> StoredEvalSet:
        """Store ``jsonl`` as eval set ``name`` (replacing a set of that name)."""
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
        self._store.merge(EVAL_SETS, row, "name", update=True)
        return stored

    def stored(self) -> list[StoredEvalSet]:
        """Every eval set stored with the Pack, by name; empty when none was stored."""
        if not self._store.has_table(EVAL_SETS):
            return []
        self._store.latest_version(EVAL_SETS)  # sets stored by other handles too
        rows = self._store.scan(EVAL_SETS, EVAL_SETS_SCHEMA.names).to_pylist()
        return sorted((StoredEvalSet(**row) for row in rows), key=lambda s: s.name)

    def read(self, name: str | None = None) -> StoredEvalSet:
        """The stored set ``name``; with no name, the Pack's only stored set."""
        stored = self.stored()
        names = [s.name for s in stored]
        if name is None and len(stored) == 1:
            return stored[0]
        if name is not None and name in names:
            return stored[names.index(name)]
        pack = self._store.location.name
        fix = (
            "Pass an eval set file (JSONL), or store one with the Pack: "
            "`wolfie eval --eval-set FILE --store`, or load a bundle that has an eval_set.jsonl."
        )
        if not stored:
            raise EvalSetNotFound(f"Pack {pack!r} stores no eval set. {fix}")
        if name is None:
            raise EvalSetNotFound(
                f"Pack {pack!r} stores {len(stored)} eval sets ({', '.join(names)}); "
                "name the one to score."
            )
        raise EvalSetNotFound(
            f"Pack {pack!r} stores no eval set {name!r}; it stores {', '.join(names)}. {fix}"
        )

    def add_runs(self, rows: list[dict[str, Any]]) -> None:
        """Append one run's result rows to ``eval_runs`` (created on first use)."""
        table = pa.Table.from_pylist(rows, schema=schemas.EVAL_RUNS_SCHEMA)
        self._store.append(schemas.EVAL_RUNS, table)

    def runs(self) -> pa.Table:
        """Every stored result row (other handles' runs too); empty when never evaluated."""
        if not self._store.has_table(schemas.EVAL_RUNS):
            return schemas.EVAL_RUNS_SCHEMA.empty_table()
        self._store.latest_version(schemas.EVAL_RUNS)
        return self._store.scan(schemas.EVAL_RUNS, schemas.EVAL_RUNS_SCHEMA.names)

    def pin(self, version: int | None = None) -> int:
        """Check the ``memories`` table out at ``version`` (default: the latest) and return
        it. Every later read through this handle sees that version."""
        versions = [v["version"] for v in self._store.versions(schemas.MEMORIES)]
        chosen = max(versions) if version is None else version
        if chosen not in versions:
            raise InvalidInput(
                f"Pack {self._store.location.name!r} has no memories version {chosen}; it has "
                f"versions {min(versions)}..{max(versions)}. Pass one of those, or none for "
                "the latest."
            )
        self._store.pin(schemas.MEMORIES, int(chosen))
        return int(chosen)


class _Kept(Protocol):  # an open Pack, as the deprecated functions below take it
    @property
    def eval_sets(self) -> EvalSets: ...


def store_eval_set(pack: _Kept, name: str, jsonl: str, source: str | None = None) -> StoredEvalSet:
    """Deprecated: ``pack.eval_sets.save(name, jsonl, source)``."""
    moved("packs.eval_sets.store_eval_set(pack)", "pack.eval_sets.save()")
    return pack.eval_sets.save(name, jsonl, source)


def stored_eval_sets(pack: _Kept) -> list[StoredEvalSet]:
    """Deprecated: ``pack.eval_sets.stored()``."""
    moved("packs.eval_sets.stored_eval_sets(pack)", "pack.eval_sets.stored()")
    return pack.eval_sets.stored()


def read_eval_set(pack: _Kept, name: str | None = None) -> StoredEvalSet:
    """Deprecated: ``pack.eval_sets.read(name)``."""
    moved("packs.eval_sets.read_eval_set(pack)", "pack.eval_sets.read()")
    return pack.eval_sets.read(name)
