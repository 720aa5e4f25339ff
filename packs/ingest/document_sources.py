"""Which files a documents ingest reads, and the source each is stored under."""

from __future__ import annotations

from pathlib import Path

from packs.ingest.documents import KINDS


def document_sources(paths: list[str], skip_hidden: bool = False) -> list[tuple[str, str]]:
    """(path, source) of every document file named or found under the folders named.

    A file found under a folder is stored as ``<folder name>/<relative path>``
    (``docs/guide.md`` for ``docs/``); a file named directly, as its name. So ingesting
    the same files again hits the same rows. ``skip_hidden`` leaves out what lies in a
    hidden file or folder under the folder (an agent's ingest, packs/ingest/policy.py).
    """
    found: list[tuple[str, str]] = []
    for text in paths:
        path = Path(text).expanduser()
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in KINDS and not (skip_hidden and _hidden(p.relative_to(path)))
            )
            found += [
                (str(p), f"{path.resolve().name}/{p.relative_to(path).as_posix()}")
                for p in files
                if p.is_file()
            ]
        else:
            found.append((str(path), path.name))
    return found


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)
