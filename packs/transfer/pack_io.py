"""Deprecated home of export and import: :mod:`packs.pack_io` runs them now (issue 43:
the transfer folder sits under the Pack, whose service ``pack.transfer`` it provides).
``export_pack`` (now ``pack.transfer.export``) and the records stay here for one
release; ``import_pack`` opens a Pack, which nothing under it may: import it from
:mod:`packs.pack_io`."""

from __future__ import annotations

import os
from typing import Protocol

from packs.deprecation import moved
from packs.errors import PackNotEmpty
from packs.transfer.service import (
    CONTENT,
    SETTINGS_TABLES,
    PackTransfer,
    TransferReport,
)

__all__ = ["CONTENT", "SETTINGS_TABLES", "PackNotEmpty", "TransferReport", "export_pack"]


class _Kept(Protocol):  # an open Pack, as the deprecated function below takes it
    @property
    def transfer(self) -> PackTransfer: ...


def export_pack(pack: _Kept, path: str | os.PathLike[str]) -> TransferReport:
    """Deprecated: ``pack.transfer.export(path)``."""
    moved("packs.transfer.pack_io.export_pack(pack)", "pack.transfer.export()")
    return pack.transfer.export(path)
