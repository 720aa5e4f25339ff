"""``wolfie doctor``: what state a Pack's storage is in, table by table.

Read-only, and it works on a Pack that no longer opens (its settings lost, a table
damaged): it looks at the storage directly. Checks, each a :class:`Finding`:

- ``pack_meta``: present, with a schema version this Wolfie reads, an embedding and
  valid settings (a Pack without them is refused by ``Pack.open``, never recreated
  with defaults; :mod:`packs.store.integrity`);
- every table: it opens (a table without a committed version is half-made), its rows
  count, its versions list, its latest commit is not lost (a deleted manifest), and one
  column of every row reads back (a deleted or corrupted data file);
- learned state: the stored utilities equal the replay of the reward log
  (``rebuild_utilities(write=False)``). A writer between its log commit and its
  utilities commit shows a passing drift; run it again if a process is writing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packs.embeddings import EmbeddingInfo
from packs.errors import PackNotFound, WolfieError
from packs.learning.rebuild import rebuild_utilities, reward_log
from packs.settings import PackSettings
from packs.store import integrity, schemas
from packs.store.gateway import PackStore
from packs.store.locations import is_remote, locate, redact_url

# Tables every Pack has from its creation (the others are made when first used).
CORE_TABLES = (
    schemas.PACK_META,
    schemas.MEMORIES,
    schemas.EPISODES,
    schemas.RETRIEVAL_LOG,
    schemas.REWARD_EVENTS,
)


@dataclass(frozen=True)
class Finding:
    check: str  # "pack_meta", "table memories", "learned state"
    ok: bool
    detail: str


@dataclass(frozen=True)
class DoctorReport:
    pack: str
    root: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return all(f.ok for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "root": self.root,
            "healthy": self.healthy,
            "findings": [asdict(f) for f in self.findings],
        }


def diagnose(
    name: str,
    root: str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> DoctorReport:
    """Check Pack ``name`` under ``root`` without writing anything."""
    location = locate(name, root, storage_options)
    store = PackStore(location, read_only=True)
    report = DoctorReport(name, redact_url(location.root))
    present = store.table_names() if _may_exist(store) else set()
    if not present:
        report.findings.append(Finding("pack", False, f"no Pack {name!r} under this root"))
        return report
    report.findings.append(_check_meta(store, present))
    readable = {t: _check_table(store, t, present, report) for t in _tables(present)}
    if readable.get(schemas.MEMORIES) and readable.get(schemas.REWARD_EVENTS):
        report.findings.append(_check_learning(store))
    return report


def _may_exist(store: PackStore) -> bool:
    """Connecting to a local path creates its folder: look before, never create one."""
    return is_remote(store.location.uri) or Path(store.location.uri).is_dir()


def _tables(present: set[str]) -> list[str]:
    return [*CORE_TABLES[1:], *sorted(present - set(CORE_TABLES))]


def _check_meta(store: PackStore, present: set[str]) -> Finding:
    if schemas.PACK_META not in present:
        if not any(integrity.table_rows(store).values()):
            return Finding(
                "pack_meta",
                False,
                "missing, and no table holds rows: a creation "
                "cut short; the next writable open finishes it",
            )
        return Finding(
            "pack_meta",
            False,
            "missing: the Pack's settings were deleted or lost; "
            "restore pack_meta.lance from a backup",
        )
    try:
        meta = store.read_meta()
        version = int(meta["schema_version"])
        EmbeddingInfo.from_dict(meta["embedding"])
        settings = PackSettings.from_dict(meta.get("settings", {}))
    except PackNotFound:
        return Finding(
            "pack_meta",
            False,
            "half-made: no committed version (a creation cut "
            "short); the next writable open finishes it",
        )
    except KeyError as exc:
        return Finding("pack_meta", False, f"incomplete: no {exc.args[0]!r} stored")
    except WolfieError as exc:
        return Finding("pack_meta", False, str(exc))
    if version > schemas.SCHEMA_VERSION:
        return Finding(
            "pack_meta",
            False,
            f"schema version {version} is newer than this "
            f"Wolfie's ({schemas.SCHEMA_VERSION}): upgrade Wolfie",
        )
    alpha = settings.rewards.alpha
    return Finding(
        "pack_meta",
        True,
        f"schema version {version}, settings version "
        f"{meta.get('settings_version', 1)}, alpha {alpha}",
    )


def _check_table(store: PackStore, name: str, present: set[str], report: DoctorReport) -> bool:
    check = f"table {name}"
    if name not in present:
        report.findings.append(Finding(check, False, "missing"))
        return False
    try:
        rows = store.count(name)
        versions = store.versions(name)
        lost = integrity.lost_commits(store, name)
        column = store.schema(name).names[0]
        read = store.scan(name, [column]).num_rows  # every data file, one column
    except PackNotFound:
        report.findings.append(Finding(check, False, "half-made: no committed version"))
        return False
    except WolfieError as exc:
        report.findings.append(Finding(check, False, str(exc)))
        return False
    if lost is not None:
        report.findings.append(Finding(check, False, integrity.lost_commit_text(lost)))
        return False
    if read != rows:
        report.findings.append(Finding(check, False, f"{rows:,} rows counted, {read:,} read"))
        return False
    latest = versions[-1]["version"] if versions else 0
    detail = f"{rows:,} rows, {len(versions)} versions kept (latest {latest})"
    report.findings.append(Finding(check, True, detail))
    return True


def _check_learning(store: PackStore) -> Finding:
    try:
        rebuilt = rebuild_utilities(store, reward_log(store), write=False)
    except WolfieError as exc:
        return Finding("learned state", False, str(exc))
    if rebuilt.changed:
        return Finding(
            "learned state",
            False,
            (
                f"{rebuilt.changed} of {rebuilt.memories} memories differ from the replay of "
                f"{rebuilt.events:,} reward events (max utility drift "
                f"{rebuilt.max_utility_drift:.3g}); Pack.rebuild_utilities() or the "
                "recompute-utilities flow stores the replay"
            ),
        )
    return Finding(
        "learned state",
        True,
        f"utilities of {rebuilt.memories} memories equal "
        f"the replay of {rebuilt.events:,} reward events",
    )
