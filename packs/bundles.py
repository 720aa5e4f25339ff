"""Load a bundle folder (``knowledge.jsonl``, ``memories.jsonl``, ``eval_set.jsonl``)
into a Pack.

A bundle is how Wolfie ships small, reviewable Pack contents: the demo (package data,
``packs/data/demo``) and the eval corpora under ``data/evals``. Every line is validated
with its line number in the error. An eval set (``eval_set.jsonl``, else
``queries.jsonl``; the format of ``evals/evalset.py``) is stored with the Pack under the
folder's name, so the eval flow finds it without a file; its ``memory:<intent>`` ids are
resolved to the row ids the load gave those memories.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput
from packs.pack import Pack
from packs.records import KnowledgeChunk

KNOWLEDGE_FILE = "knowledge.jsonl"
MEMORIES_FILE = "memories.jsonl"
# A bundle's eval set: eval_set.jsonl, else queries.jsonl (the eval corpora under data/evals).
EVAL_SET_FILES = ("eval_set.jsonl", "queries.jsonl")
MEMORY_REF = "memory:"


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; blank lines are skipped, bad ones named."""
    with open(path, encoding="utf-8") as handle:
        yield from parse_jsonl(handle, str(path))


def parse_jsonl(lines: Iterable[str], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``read_jsonl`` over lines already in memory; ``where`` names them in errors."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}:{number}: not valid JSON ({exc.msg}).") from exc
        if not isinstance(value, dict):
            raise InvalidInput(f"{where}:{number}: expected a JSON object.")
        yield number, value


@dataclass(frozen=True)
class BundleLoad:
    """What a bundle load stored; ``refs`` maps ``source#position`` / ``memory:<intent>``
    references (used by episode files) to row ids."""

    knowledge: int
    memories: int
    merged: int
    refs: dict[str, str]
    eval_set: str | None = None  # name of the eval set stored with the Pack


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
            if result.id is not None:  # None: refused by the Pack's admission control
                refs[f"{MEMORY_REF}{obj['intent']}"] = result.id
            memories += 1
            merged += result.merged
    eval_set = None
    eval_path = next((folder / n for n in EVAL_SET_FILES if (folder / n).exists()), None)
    if eval_path is not None:
        eval_set = folder.resolve().name
        pack.eval_sets.save(eval_set, _resolve_memory_refs(eval_path, refs), str(eval_path))
    return BundleLoad(len(chunks), memories, merged, refs, eval_set)


def _resolve_memory_refs(path: Path, refs: dict[str, str]) -> str:
    """The eval set's JSONL with every ``memory:<intent>`` id replaced by its row id
    (memories are merged on load, so only the load knows their ids)."""
    lines = []
    for number, obj in read_jsonl(path):
        relevant = obj.get("relevant")
        if isinstance(relevant, list):
            obj["relevant"] = [_row_ref(ref, refs, path, number) for ref in relevant]
        elif isinstance(relevant, dict):
            obj["relevant"] = {_row_ref(r, refs, path, number): g for r, g in relevant.items()}
        lines.append(json.dumps(obj, ensure_ascii=False, sort_keys=True))
    return "\n".join(lines) + "\n"


def _row_ref(ref: object, refs: dict[str, str], path: Path, number: int) -> object:
    if not isinstance(ref, str) or not ref.startswith(MEMORY_REF):
        return ref  # source#position and row ids resolve when the set is scored
    if ref not in refs:
        raise InvalidInput(
            f"{path}:{number}: {ref!r} names no memory of this bundle; use the exact "
            f"intent of a line of {MEMORIES_FILE}."
        )
    return refs[ref]
