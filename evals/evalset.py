"""Eval sets: a JSONL format, a loader, and resolving its ids against a Pack.

One JSON object per line::

    {"id": "cp-preserve",                        # optional; unique; default "line-<n>"
     "query": "copy a file and keep its timestamps",              # required
     "relevant": ["man/cp.1#16"] or {"man/cp.1#16": 2, ...},      # ids, optional grades
     "reference_contexts": ["same as --preserve=mode,..."],       # optional texts
     "split": "train" | "heldout",                                # optional
     "metadata": {...}}                                           # optional, free-form

A line needs ``relevant`` ids, ``reference_contexts``, or both. An id is a knowledge
chunk's ``source#position`` (what bundles and episode files use) or a row id as stored
(``k_...``, ``m_...``); in a bundle's ``eval_set.jsonl`` also ``memory:<intent>``, which
the bundle load resolves. A plain list gives every id grade 1. Unknown keys, empty
queries, malformed JSON and duplicate query ids are refused with the line number.

An eval set is a file, or stored with the Pack (``packs/eval_sets.py``):
:func:`resolve_eval_set` takes either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packs.bundles import parse_jsonl
from packs.errors import InvalidInput
from packs.pack import Pack
from packs.store.rows import knowledge_id

SPLITS = ("train", "heldout")
_KEYS = {"id", "query", "relevant", "reference_contexts", "split", "metadata"}


@dataclass(frozen=True)
class EvalQuery:
    id: str
    query: str
    relevant: dict[str, int]  # id as written -> grade (>= 1)
    reference_contexts: tuple[str, ...]
    split: str | None
    line: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalSet:
    name: str  # the file's stem, e.g. "queries"
    path: str  # the file, or where the Pack stores it
    digest: str  # sha256 of the UTF-8 text: which version of the set was scored
    queries: tuple[EvalQuery, ...]

    def split(self, name: str) -> list[EvalQuery]:
        return [q for q in self.queries if q.split == name]


def row_id(ref: str) -> str:
    """The stored row id of ``ref``: ``source#position`` maps to the chunk's id."""
    source, sep, position = ref.rpartition("#")
    if sep and source and position.lstrip("-").isdigit():
        return knowledge_id(source, int(position))
    return ref


def load_eval_set(path: str | Path, *, name: str | None = None) -> EvalSet:
    """Read and check an eval set file (see the module docstring for the format)."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"Eval set {str(path)!r} does not exist; pass a JSONL file.")
    return parse_eval_set(path.read_text(encoding="utf-8"), name or path.stem, str(path))


def resolve_eval_set(pack: Pack, spec: str | None) -> EvalSet:
    """``spec`` as a JSONL file when one exists at that path, else the eval set of that
    name stored with ``pack``; ``None``: the Pack's only stored set."""
    if spec is not None and Path(spec).is_file():
        return load_eval_set(spec)
    if spec is not None and (spec.endswith(".jsonl") or "/" in spec):
        raise InvalidInput(f"Eval set file {spec!r} does not exist; pass a JSONL file.")
    stored = pack.eval_sets.read(spec)
    return parse_eval_set(stored.jsonl, stored.name, f"eval set {stored.name!r} of {pack.name!r}")


def parse_eval_set(text: str, name: str, where: str) -> EvalSet:
    """Check the JSONL ``text`` of an eval set; ``where`` names it in errors."""
    path = where
    queries: list[EvalQuery] = []
    seen: dict[str, int] = {}
    for number, obj in parse_jsonl(text.splitlines(), where):
        query = _parse(obj, f"{path}:{number}", number)
        if query.id in seen:
            raise InvalidInput(
                f"{path}:{number}: query id {query.id!r} repeats line {seen[query.id]}; "
                "give every query its own id."
            )
        seen[query.id] = number
        queries.append(query)
    if not queries:
        raise InvalidInput(f"{path}: no queries found; expected one JSON object per line.")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return EvalSet(name, where, digest, tuple(queries))


def _parse(obj: dict[str, Any], where: str, number: int) -> EvalQuery:
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown key(s) {unknown}; known keys are {sorted(_KEYS)}.")
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput(f"{where}: 'query' must be a non-empty string.")
    qid = obj.get("id", f"line-{number}")
    if not isinstance(qid, str) or not qid.strip():
        raise InvalidInput(f"{where}: 'id' must be a non-empty string.")
    relevant = _relevance(obj.get("relevant", []), where)
    contexts = obj.get("reference_contexts", [])
    if not isinstance(contexts, list) or not all(
        isinstance(c, str) and c.strip() for c in contexts
    ):
        raise InvalidInput(f"{where}: 'reference_contexts' must be a list of non-empty strings.")
    if not relevant and not contexts:
        raise InvalidInput(
            f"{where}: query {qid!r} has no 'relevant' ids and no 'reference_contexts'; "
            "give at least one so it can be scored."
        )
    split = obj.get("split")
    if split is not None and split not in SPLITS:
        raise InvalidInput(f"{where}: 'split' must be one of {list(SPLITS)}, got {split!r}.")
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}: 'metadata' must be a JSON object.")
    return EvalQuery(qid, query.strip(), relevant, tuple(contexts), split, number, metadata)


def _relevance(value: object, where: str) -> dict[str, int]:
    if isinstance(value, list):
        value = dict.fromkeys(value, 1)
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: 'relevant' must be a list of ids or an {{id: grade}} object.")
    out: dict[str, int] = {}
    for ref, grade in value.items():
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidInput(f"{where}: relevant ids must be non-empty strings, got {ref!r}.")
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            raise InvalidInput(
                f"{where}: grade of {ref!r} must be an int >= 1, got {grade!r} "
                "(leave non-relevant ids out)."
            )
        out[ref] = grade
    return out


def check_known_ids(eval_set: EvalSet, known_row_ids: Iterable[str], where: str) -> None:
    """Raise one error listing every line whose ids are not rows of ``where`` (a Pack or
    corpus name), so a typo or a stale eval set is caught before anything is scored."""
    known = set(known_row_ids)
    problems = [
        f"  line {q.line} ({q.id}): {missing}"
        for q in eval_set.queries
        if (missing := sorted(ref for ref in q.relevant if row_id(ref) not in known))
    ]
    if problems:
        shown = "\n".join(problems[:20]) + ("\n  ..." if len(problems) > 20 else "")
        raise InvalidInput(
            f"{eval_set.path}: {len(problems)} line(s) name ids that {where} does not hold:\n"
            f"{shown}\nFix the ids, or load the corpus these ids come from into {where}."
        )


Row = dict[str, Any]


def drop_ambiguous(questions: list[Row], paraphrases: list[Row]) -> tuple[list[Row], ...]:
    """``(questions, paraphrases, removed)``: the lines worded like another line of the set
    (case and spacing aside) with other ``relevant`` ids are removed, since the same words
    then name different evidence and no ranking can be right ("What did Mochi chew
    through?" asked of four chats, issue 41). A removed question takes its paraphrases
    with it; each removed line is kept in ``removed`` with its ``reason``."""

    def words(row: Row) -> str:
        return " ".join(str(row["query"]).lower().split())

    evidence: dict[str, set[tuple[str, ...]]] = {}
    for row in [*questions, *paraphrases]:
        evidence.setdefault(words(row), set()).add(tuple(sorted(row["relevant"])))
    ambiguous = {text for text, seen in evidence.items() if len(seen) > 1}
    why = "worded like another line of this eval set whose evidence differs"
    removed = [row | {"reason": why} for row in questions if words(row) in ambiguous]
    gone = {row["id"] for row in removed}
    for row in paraphrases:
        if words(row) in ambiguous:
            removed.append(row | {"reason": why})
        elif row.get("metadata", {}).get("paraphrase_of") in gone:
            removed.append(row | {"reason": "paraphrase of a removed question"})
    dropped = {row["id"] for row in removed}
    kept_questions = [row for row in questions if row["id"] not in dropped]
    return kept_questions, [row for row in paraphrases if row["id"] not in dropped], removed
