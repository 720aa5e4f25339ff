"""A bundle's showcase: one question its episodes teach about, and the items that help."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from packs.errors import InvalidInput

SHOWCASE_FILE = "showcase.json"


@dataclass(frozen=True)
class Showcase:
    query: str
    helpful: tuple[str, ...]  # row ids of the items that help with the query


def load_showcase(data_dir: str | Path, refs: dict[str, str]) -> Showcase:
    """The showcase question of the bundle in ``data_dir`` (``showcase.json``: ``query``
    and ``helpful`` item references), with the references resolved to row ids."""
    path = Path(data_dir) / SHOWCASE_FILE
    with open(path, encoding="utf-8") as handle:
        showcase = json.load(handle)
    query, helpful = showcase.get("query"), showcase.get("helpful")
    if not isinstance(query, str) or not query.strip() or not isinstance(helpful, list):
        raise InvalidInput(f"{path}: expected {{'query': str, 'helpful': [ref, ...]}}.")
    missing = [ref for ref in helpful if ref not in refs]
    if missing:
        raise InvalidInput(f"{path}: unknown item reference(s) {missing}.")
    return Showcase(query, tuple(refs[ref] for ref in helpful))
