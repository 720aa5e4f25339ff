"""Reading the labelled JSON-lines files of the eval sets (``data/``): one object a line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from packs.errors import InvalidInput

T = TypeVar("T")


def read_objects(path: str | Path, parse: Callable[[dict[str, Any], str], T], what: str) -> list[T]:
    """``parse(obj, "path:line")`` of each JSON object in ``path``; blank lines are skipped,
    and a line that is no JSON object, or a file without one, raises InvalidInput naming it."""
    found = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{where}: not valid JSON ({exc.msg}).") from exc
            if not isinstance(obj, dict):
                raise InvalidInput(f"{where}: expected a JSON object, got {type(obj).__name__}.")
            found.append(parse(obj, where))
    if not found:
        raise InvalidInput(f"{path}: no {what} found; expected one JSON object per line.")
    return found
