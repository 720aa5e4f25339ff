"""What a Pack's files say about their own state: a creation cut short, a lost latest
commit, tables without their settings. Used when a Pack is opened
(:mod:`packs.opening`) and by ``wolfie doctor`` (:mod:`packs.doctor`).

- **Half-made tables.** Creating a table writes its folder first and its first manifest
  last; a creation cut short (ENOSPC, a crash) leaves a folder with an empty
  ``_versions/``: listed by LanceDB, openable by nobody, holding no data. Such a table
  is dropped and created again on the next writable open. One that holds data files but
  no manifest is no half-made table: it is damaged, and left alone.
- **A lost latest commit.** Every commit rewrites ``_versions/latest_version_hint.json``
  after its manifest. A hint newer than the newest manifest means a manifest was
  deleted: the rows of that commit are gone, silently, unless this is checked.
- **Rows without settings.** ``pack_meta`` (settings, embedding, schema version) is
  created last and written once the other tables exist. Tables with rows and no
  ``pack_meta`` are no Pack being created: its settings were deleted or lost, and
  recreating them with defaults would silently change how the Pack learns.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from packs.errors import DamagedPack, PackNotFound
from packs.store.gateway import PackStore
from packs.store.locations import is_remote

HINT_FILE = "latest_version_hint.json"
_U64_MAX = 2**64 - 1
# A hint read just before another process's newest manifest became visible is re-read
# once after this pause (hand-set: far above a manifest write) before a commit is
# called lost.
_HINT_RECHECK_S = 0.2


def table_rows(store: PackStore) -> dict[str, int | None]:
    """Rows of every table present; None for a table that has no committed version.
    A local Pack folder that does not exist is not looked into (connecting creates it)."""
    rows: dict[str, int | None] = {}
    if not is_remote(store.location.uri) and not Path(store.location.uri).is_dir():
        return rows
    for name in sorted(store.table_names()):
        try:
            rows[name] = store.count(name)
        except PackNotFound:
            rows[name] = None
    return rows


def data_files(store: PackStore, name: str) -> int | None:
    """How many data files a local table's folder holds; None on object storage."""
    if is_remote(store.location.uri):
        return None
    folder = Path(store.location.uri) / f"{name}.lance" / "data"
    return sum(1 for _ in folder.iterdir()) if folder.is_dir() else 0


def check_settings_kept(store: PackStore, rows: dict[str, int | None]) -> None:
    """Refuse a Pack whose tables hold rows (or data) while its settings are missing."""
    held = {name: n for name, n in rows.items() if n}
    orphans = [name for name, n in rows.items() if n is None and data_files(store, name) != 0]
    if not held and not orphans:
        return
    name, root = store.location.name, store.location.root
    found = ", ".join([f"{t}: {n:,} rows" for t, n in held.items()] + orphans)
    raise DamagedPack(
        f"Pack {name!r} under {root!r} holds data ({found}) but no settings: its "
        "pack_meta table (settings, embedding, schema version) was deleted or lost. Wolfie "
        "will not recreate it with default settings. Restore pack_meta.lance from a backup; "
        f"`wolfie doctor --pack {name}` shows what is left."
    )


def drop_half_made(store: PackStore, rows: dict[str, int | None]) -> list[str]:
    """Drop the tables a cut-short creation left without a version (they hold no data);
    return their names."""
    dropped = []
    for name, count in rows.items():
        if count is None:
            if data_files(store, name) != 0:  # data, or unknown on object storage
                raise store.damaged(name, "it has no committed version but may hold data")
            store.drop_table(name)
            dropped.append(name)
    return dropped


def lost_commits(store: PackStore, name: str) -> tuple[int, int] | None:
    """(newest manifest, hinted version) of a local table whose latest commit is lost;
    None when the table is whole (or on object storage, where it is not checked).

    The hinted version's manifest is looked for by name first (Lance names one
    ``{version}.manifest``, or ``{u64::MAX - version}.manifest`` in its V2 scheme): a
    directory listing, no table opened. Only when it is missing does Lance say which
    version is the newest, twice, a pause apart (a hint read just before another
    process's newest manifest appeared is no loss)."""
    if is_remote(store.location.uri):
        return None
    folder = Path(store.location.uri) / f"{name}.lance" / "_versions"
    lost = None
    for attempt in range(2):
        if attempt:
            time.sleep(_HINT_RECHECK_S)
        hinted = _hinted_version(folder / HINT_FILE)
        if hinted is None or _has_manifest(folder, hinted):
            return None
        latest = store.latest_version(name)  # after the hint: a newer commit only helps
        if hinted <= latest:
            return None
        lost = (latest, hinted)
    return lost


def _has_manifest(folder: Path, version: int) -> bool:
    return any((folder / f"{n}.manifest").is_file() for n in (version, _U64_MAX - version))


def check_latest_commits(store: PackStore) -> None:
    """Raise :class:`DamagedPack` for the first table whose latest commit is lost (local
    Packs: on object storage each look is a request, and tables are opened lazily)."""
    if is_remote(store.location.uri):
        return
    for name in sorted(store.table_names()):
        lost = lost_commits(store, name)
        if lost is not None:
            raise store.damaged(name, lost_commit_text(lost))


def lost_commit_text(lost: tuple[int, int]) -> str:
    latest, hinted = lost
    return (
        f"its latest commit (version {hinted}) is missing, the newest manifest left is "
        f"version {latest}, so what was committed after it is lost (a manifest in "
        f"_versions/ was deleted). To go on from version {latest} anyway, delete that "
        f"table's _versions/{HINT_FILE}"
    )


def _hinted_version(path: Path) -> int | None:
    try:
        version = json.loads(path.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None  # no hint (an older Lance) or one being rewritten: nothing to compare
    return int(version) if isinstance(version, int) else None
