"""Damage done to a local Pack's files on purpose, as a disk, a crash or a hand would
(issue 23): a creation cut short, deleted or scrambled data files, a deleted latest
manifest, a deleted ``pack_meta``."""

from __future__ import annotations

import shutil
from pathlib import Path

from packs import Pack
from tests.support.packs import SeededEmbedder

LAST_INTENT = "the last acknowledged memory"


def build(root: Path, name: str = "t") -> Path:
    """A small Pack (alpha 0.4, not the default 0.3): memories, an episode, a reward,
    then one more memory as the last commit of ``memories``. Returns its folder."""
    embedder = SeededEmbedder()
    with Pack.open(name, root, embedder=embedder, settings={"alpha": 0.4}) as pack:
        for i in range(3):
            pack.remember(f"intent {i}", f"response {i}")
        pack.feedback(pack.recall("intent 1").episode_id, 1.0)
    with Pack.open(name, root, embedder=embedder) as pack:
        pack.remember(LAST_INTENT, "it must not vanish")
    return root / name


def table_folder(pack_folder: Path, table: str) -> Path:
    return pack_folder / f"{table}.lance"


def delete_data_files(pack_folder: Path, table: str = "memories") -> None:
    for path in (table_folder(pack_folder, table) / "data").iterdir():
        path.unlink()


def scramble_data_files(pack_folder: Path, table: str = "memories") -> None:
    """Flip every 7th byte past the first 100: the files keep their size and names."""
    for path in (table_folder(pack_folder, table) / "data").iterdir():
        data = bytearray(path.read_bytes())
        for i in range(100, len(data) - 100, 7):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))


def delete_latest_manifest(pack_folder: Path, table: str = "memories") -> int:
    """Delete the manifest of the table's newest version; return that version. Lance
    names manifests by version, or by ``u64::MAX - version`` (its V2 scheme)."""
    versions = table_folder(pack_folder, table) / "_versions"
    numbers = [int(p.stem) for p in versions.glob("*.manifest")]
    v2 = min(numbers) > 2**63
    newest = min(numbers) if v2 else max(numbers)
    (versions / f"{newest}.manifest").unlink()
    return (2**64 - 1 - newest) if v2 else newest


def delete_hint(pack_folder: Path, table: str = "memories") -> None:
    (table_folder(pack_folder, table) / "_versions" / "latest_version_hint.json").unlink()


def delete_pack_meta(pack_folder: Path) -> None:
    shutil.rmtree(table_folder(pack_folder, "pack_meta"))


def cut_short_creation(root: Path, name: str = "t", table: str = "memories") -> Path:
    """What ENOSPC while creating a Pack leaves: a table folder with an empty
    ``_versions/`` and nothing else."""
    (root / name / f"{table}.lance" / "_versions").mkdir(parents=True)
    return root / name


def corrupt_latest_manifest(pack_folder: Path, how: str, table: str = "memories") -> None:
    """Damage the manifest of the table's newest version in place: its bytes scrambled
    ("scramble"), its second half cut off ("truncate") or all of it ("empty")."""
    versions = table_folder(pack_folder, table) / "_versions"
    numbers = [int(p.stem) for p in versions.glob("*.manifest")]
    newest = min(numbers) if min(numbers) > 2**63 else max(numbers)
    path = versions / f"{newest}.manifest"
    data = path.read_bytes()
    damaged = {
        "scramble": bytes(b ^ 0x5A for b in data),
        "truncate": data[: len(data) // 2],
        "empty": b"",
    }
    path.write_bytes(damaged[how])
