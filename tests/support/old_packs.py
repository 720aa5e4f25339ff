"""Packs in the shape an older schema left them, for the migration tests.

:func:`cut_back` takes a Pack made by this code and gives each table the shape schema
``version`` had: the columns and tables later schemas added are dropped, and
``pack_meta`` holds what that release wrote (``schema_version`` alone, no named
migrations). What each schema added is written out here from the schema history
(``git log -p packs/store/schemas.py``), not read from packs/store/migrate.py, so a step
that forgets a column fails the tests. :func:`open_at_once` is the body of each of the
processes that open one old Pack writable at the same moment.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

# schema -> ({table: columns it added}, tables it added)
ADDED: dict[int, tuple[dict[str, list[str]], list[str]]] = {
    2: (
        {"memories": ["expires_at", "superseded_by", "superseded_at", "superseded_reason"]},
        ["forgotten"],
    ),
    3: ({}, ["memory_history"]),
    4: (
        {
            "memories": ["held_at", "held_reason", "held_episode"],
            "lesson_log": ["model", "episode_id"],
        },
        [],
    ),
    5: ({"retrieval_log": ["lexical"]}, ["tuning"]),
    6: ({"retrieval_log": ["placed_by", "propensity"], "lesson_log": ["scope"]}, []),
}
NEWEST = max(ADDED)


def cut_back(root: Path, name: str, version: int) -> None:
    """Give Pack ``name`` under ``root`` (closed) the shape of schema ``version``."""
    import lancedb

    db = lancedb.connect(str(root / name))
    for later in range(NEWEST, version, -1):
        columns, tables = ADDED[later]
        for table in tables:
            db.drop_table(table)
        for table, dropped in columns.items():
            db.open_table(table).drop_columns(dropped)
    meta = db.open_table("pack_meta")
    meta.delete("key LIKE 'migration:%'")
    meta.update(where="key = 'schema_version'", values={"value_json": str(version)})


def columns_of(root: Path, name: str) -> dict[str, set[str]]:
    """Each table of Pack ``name`` and its columns, read without Wolfie."""
    import lancedb

    db = lancedb.connect(str(root / name))
    return {t: set(db.open_table(t).schema.names) for t in db.list_tables().tables}


def meta_of(root: Path, name: str) -> tuple[dict[str, object], int]:
    """Pack ``name``'s ``pack_meta`` values, read without Wolfie, and the table's version
    (a write of any of them makes a new one)."""
    import lancedb

    table = lancedb.connect(str(root / name)).open_table("pack_meta")
    rows = table.to_arrow().to_pylist()
    return {r["key"]: json.loads(r["value_json"]) for r in rows}, int(table.version)


def open_at_once(name: str, root: str, start: float) -> list[str]:
    """Wait until ``start`` (a ``time.time()``), open the Pack writable, and return the
    named steps it then records."""
    from packs import Pack

    time.sleep(max(0.0, start - time.time()))
    with Pack.open(name, root):
        pass
    return sorted(k for k in meta_of(Path(root), name)[0] if k.startswith("migration:"))
