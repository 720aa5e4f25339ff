"""The check every scheduled flow runs first: the Pack exists and holds rows."""

from __future__ import annotations

from dataclasses import dataclass

from packs.errors import EmptyPack
from packs.pack import Pack


@dataclass(frozen=True)
class PackStatus:
    pack: str
    root: str
    rows: int  # memories and knowledge
    settings_version: int


def require_rows(pack: Pack) -> PackStatus:
    """The Pack's size and settings version; raises :class:`EmptyPack` when it holds no
    memory or knowledge yet (a learning flow has nothing to work on)."""
    rows = pack.count()
    if rows == 0:
        raise EmptyPack(
            f"Pack {pack.name!r} under {pack.root!r} has no memories or knowledge yet; "
            "remember, ingest or load a bundle first."
        )
    return PackStatus(pack.name, pack.root, rows, pack.settings_version)
