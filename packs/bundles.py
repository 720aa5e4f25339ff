"""Load a bundle folder (``knowledge.jsonl``, ``memories.jsonl``) into a Pack.

A bundle is how Wolfie ships small, reviewable Pack contents under ``data/`` (the demo,
eval corpora). Every line is validated with its line number in the error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput
from packs.pack import Pack
from packs.records import KnowledgeChunk

KNOWLEDGE_FILE = "knowledge.jsonl"
MEMORIES_FILE = "memories.jsonl"


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; blank lines are skipped, bad ones named."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{number}: not valid JSON ({exc.msg}).") from exc
            if not isinstance(value, dict):
                raise InvalidInput(f"{path}:{number}: expected a JSON object.")
            yield number, value


@dataclass(frozen=True)
class BundleLoad:
    """What a bundle load stored; ``refs`` maps ``source#position`` / ``memory:<intent>``
    references (used by episode files) to row ids."""

    knowledge: int
    memories: int
    merged: int
    refs: dict[str, str]


def load_bundle(pack: Pack, folder: str | Path) -> BundleLoad:
    """Add the bundle's knowledge chunks and memories to ``pack`` (idempotent)."""
    folder = Path(folder)
    refs: dict[str, str] = {}
    chunks = []
    knowledge_path = folder / KNOWLEDGE_FILE
    if knowledge_path.exists():
        for number, obj in read_jsonl(knowledge_path):
            try:
                chunks.append(KnowledgeChunk(**obj))
            except TypeError as exc:
                raise InvalidInput(f"{knowledge_path}:{number}: {exc}") from exc
    ids = pack.add_knowledge(chunks)
    for chunk, chunk_id in zip(chunks, ids, strict=True):
        refs[f"{chunk.source}#{chunk.position}"] = chunk_id
    memories = merged = 0
    memories_path = folder / MEMORIES_FILE
    if memories_path.exists():
        for number, obj in read_jsonl(memories_path):
            try:
                result = pack.remember(
                    obj["intent"],
                    obj["response"],
                    obj.get("outcome"),
                    obj.get("metadata"),
                    polarity=obj.get("polarity"),
                    source=obj.get("source", str(memories_path.name)),
                )
            except KeyError as exc:
                raise InvalidInput(f"{memories_path}:{number}: missing field {exc}.") from exc
            refs[f"memory:{obj['intent']}"] = result.id
            memories += 1
            merged += result.merged
    return BundleLoad(len(chunks), memories, merged, refs)
