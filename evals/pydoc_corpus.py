"""Build the Python-docstring eval corpus from the standard library installed here.

A second real corpus for the learning benchmark (issue 8 asks for one beside the man
pages): the docstrings of everyday standard-library modules and built-in types of the
Python that runs this script, cut the way an API-docs assistant would index them:

- ``module``: the module docstring, in paragraphs merged up to about 60 words. These
  are the hub chunks: they name the module, so they look like every question about it.
- ``function`` / ``class`` / ``method``: one public callable with its signature and its
  docstring (split at paragraphs above 180 words).

Near-duplicates come from the library itself (``os.path.exists`` and ``Path.exists``,
``shutil.copy`` / ``copy2`` / ``copyfile``, ``str.strip`` / ``lstrip`` / ``rstrip``) and
so do plausible wrong neighbours.

How to run (from the repository root)::

    python -m evals.pydoc_corpus build --out data/evals/pydocs
    python -m evals.pydoc_corpus label data/evals/pydocs

``label`` resolves the answers of the hand-written ``questions.jsonl`` (qualified names
such as ``shutil.copy2``, or ``module:~words`` for a chunk containing those words) into
the eval set ``queries.jsonl``, split like the man-page set.
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import inspect
import json
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from evals.manpage_corpus import label as label_with
from packs.errors import InvalidInput

MODULES = (
    "os",
    "os.path",
    "shutil",
    "pathlib",
    "glob",
    "fnmatch",
    "tempfile",
    "json",
    "csv",
    "re",
    "string",
    "textwrap",
    "difflib",
    "itertools",
    "functools",
    "collections",
    "heapq",
    "bisect",
    "operator",
    "copy",
    "datetime",
    "time",
    "calendar",
    "random",
    "secrets",
    "math",
    "statistics",
    "hashlib",
    "base64",
    "uuid",
    "zipfile",
    "tarfile",
    "gzip",
    "subprocess",
    "urllib.parse",
)
BUILTIN_TYPES = (str, bytes, list, dict, set, int, float)
# Modules whose public functions are implemented in another module.
_IMPLEMENTED_IN = {"os": ("posix",), "os.path": ("posixpath", "genericpath")}
MAX_WORDS = 180
MERGE_WORDS = 60


def _paragraphs(doc: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc) if p.strip()]


def _pieces(head: str, doc: str, merge: bool = False) -> Iterator[str]:
    """``head`` then the docstring, in pieces of at most ``MAX_WORDS`` words."""
    piece: list[str] = []
    for paragraph in _paragraphs(doc):
        if piece and len(" ".join([*piece, paragraph]).split()) > (
            MERGE_WORDS if merge else MAX_WORDS
        ):
            yield f"{head}\n{' '.join(piece)}"
            piece = []
        piece.append(paragraph)
    if piece:
        yield f"{head}\n{' '.join(piece)}"


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # default values' addresses vary per run


def _public(owner: Any) -> list[tuple[str, Any]]:
    names = getattr(owner, "__all__", None) or [n for n in vars(owner) if not n.startswith("_")]
    return [(n, getattr(owner, n)) for n in sorted(names) if hasattr(owner, n)]


def chunks_of(module: ModuleType, name: str) -> Iterator[dict[str, Any]]:
    """Rows (without source/position) for module ``name`` (as imported: ``os.path``, not
    ``posixpath``): its docstring, then its public callables."""
    for text in _pieces(f"{name} module", inspect.getdoc(module) or "", merge=True):
        yield {"name": name, "kind": "module", "text": text}
    for attr, obj in _public(module):
        if not callable(obj) or not inspect.getdoc(obj):
            continue
        defined_in = (getattr(obj, "__module__", name) or name).lstrip("_")
        if defined_in != name and defined_in not in _IMPLEMENTED_IN.get(name, ()):
            continue  # re-exported from elsewhere
        yield from _callable_rows(f"{name}.{attr}", obj)


def _callable_rows(qualname: str, obj: Any) -> Iterator[dict[str, Any]]:
    kind = "class" if inspect.isclass(obj) else "function"
    own_doc = inspect.getdoc(obj) or ""
    for text in _pieces(f"{qualname}{_signature(obj)}", own_doc):
        yield {"name": qualname, "kind": kind, "text": text}
    if kind == "class":
        for attr in sorted(vars(obj)):
            doc = inspect.getdoc(getattr(obj, attr, None))
            if attr.startswith("_") or not callable(getattr(obj, attr, None)) or not doc:
                continue
            if doc == own_doc or doc == inspect.getdoc(getattr(object, attr, None)):
                continue
            head = f"{qualname}.{attr}{_signature(getattr(obj, attr))}"
            for text in _pieces(head, doc):
                yield {"name": f"{qualname}.{attr}", "kind": "method", "text": text}


def build(out: Path) -> int:
    """Write ``knowledge.jsonl`` for ``MODULES`` and the built-in types."""
    out.mkdir(parents=True, exist_ok=True)
    groups: list[tuple[str, list[dict[str, Any]]]] = [
        (m, list(chunks_of(importlib.import_module(m), m))) for m in MODULES
    ]
    groups.append(("builtins", [r for t in BUILTIN_TYPES for r in _callable_rows(t.__name__, t)]))
    for name, obj in _public(builtins):
        if inspect.isbuiltin(obj):
            groups[-1][1].extend(_callable_rows(name, obj))
        elif _plain_builtin_class(obj) and inspect.getdoc(obj):  # enumerate, zip, range...
            for text in _pieces(f"{name}{_signature(obj)}", inspect.getdoc(obj) or ""):
                groups[-1][1].append({"name": name, "kind": "class", "text": text})
    count = 0
    with (out / "knowledge.jsonl").open("w", encoding="utf-8") as handle:
        for module, rows in groups:
            for position, row in enumerate(rows):
                line = {
                    "source": f"py/{module}",
                    "position": position,
                    "title": row["name"],
                    "text": row["text"],
                    "metadata": {"module": module, "name": row["name"], "kind": row["kind"]},
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
    return count


def _plain_builtin_class(obj: Any) -> bool:
    return (
        inspect.isclass(obj)
        and not issubclass(obj, BaseException)
        and obj not in BUILTIN_TYPES
        and obj.__module__ == "builtins"
    )


def select(rows: Sequence[dict[str, Any]], selector: str) -> list[str]:
    """``shutil.copy2``: every chunk of that callable; ``module:~words``: the chunks of
    ``module`` containing ``words``; ``module:#module``: the module docstring chunks."""
    module, sep, what = selector.partition(":")
    if not sep:
        found = [r for r in rows if r["metadata"]["name"] == selector]
    elif what.startswith("#"):
        found = [
            r
            for r in rows
            if r["metadata"]["module"] == module and r["metadata"]["kind"] == what[1:]
        ]
    else:
        found = [
            r
            for r in rows
            if r["metadata"]["module"] == module and what.lstrip("~").lower() in r["text"].lower()
        ]
    if not found:
        raise InvalidInput(f"Selector {selector!r} matches no chunk.")
    return [f"{r['source']}#{r['position']}" for r in found]


def label(folder: Path) -> int:
    """Write ``queries.jsonl`` as the man-page corpus does, with this corpus's selectors."""
    return label_with(folder, select)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.pydoc_corpus", description=__doc__)
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("build").add_argument("--out", type=Path, default=Path("data/evals/pydocs"))
    sub.add_parser("label").add_argument(
        "folder", type=Path, nargs="?", default=Path("data/evals/pydocs")
    )
    args = parser.parse_args(argv)
    if args.step == "build":
        count = build(args.out)
        print(f"Wrote {count} chunks (Python {sys.version.split()[0]}) to {args.out}")
    else:
        print(f"Wrote {label(args.folder)} queries to {args.folder / 'queries.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
