"""Small real slices of the committed man-page eval data, for tests that embed them."""

from __future__ import annotations

import json
from pathlib import Path

from packs.bundles import read_jsonl

MANPAGES = Path(__file__).resolve().parents[2] / "data" / "evals" / "manpages"


def write_slice(folder: Path, commands: set[str], max_queries: int | None = None) -> Path:
    """A bundle of the committed chunks of ``commands`` and an eval set of the committed
    queries whose relevant chunks all lie in it (``folder/queries.jsonl``)."""
    folder.mkdir(parents=True, exist_ok=True)
    chunks = [
        c
        for _, c in read_jsonl(MANPAGES / "knowledge.jsonl")
        if c["metadata"]["command"] in commands
    ]
    refs = {f"{c['source']}#{c['position']}" for c in chunks}
    queries = [q for _, q in read_jsonl(MANPAGES / "queries.jsonl") if set(q["relevant"]) <= refs][
        :max_queries
    ]
    for name, rows in (("knowledge.jsonl", chunks), ("queries.jsonl", queries)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder
