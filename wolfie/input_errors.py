"""A schema violation as one line, the same at every door (MCP tools, the REST API).

pydantic reports a rejected argument as a multi-line dump ending in a documentation URL;
an agent (or a person reading a log) needs the parameter, the limit it broke and what it
sent, on one line: ``k: Input should be less than or equal to 100 (got 500)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SHOWN_ERRORS = 3  # errors named in the line; the rest are counted
SHOWN_VALUE_CHARS = 60  # characters of a rejected value quoted back (hand-set)
# where FastAPI says a parameter came from: not part of its name
_SOURCES = frozenset({"body", "query", "path", "header", "cookie"})
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "bytes", "none", "dict", "list"})


def one_line(errors: Iterable[Mapping[str, Any]]) -> str:
    """``param: what is wrong (got value)`` for pydantic's error dicts, joined by "; "."""
    found = _unions(list(errors))
    parts = [_describe(error) for error in found[:SHOWN_ERRORS]]
    if len(found) > SHOWN_ERRORS:
        parts.append(f"and {len(found) - SHOWN_ERRORS} more")
    return "; ".join(parts) or "the arguments do not match the schema"


def _unions(errors: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """pydantic reports a value that fits no member of a union once per member, the
    member's name last in ``loc`` (``metadata.x.str``, ``metadata.x.int``, ...): one
    error each, naming the members."""
    merged: list[Mapping[str, Any]] = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        last = merged[-1] if merged else None
        if (
            last is not None
            and _is_member(loc)
            and _is_member(tuple(last["loc"]))
            and tuple(last["loc"])[:-1] == loc[:-1]
            and last.get("input") is error.get("input")
        ):
            members = [*last["members"], str(loc[-1])]
            merged[-1] = {
                **last,
                "members": members,
                "msg": f"Input should be one of: {', '.join(members)}",
            }
            continue
        merged.append({**error, "members": [str(loc[-1])] if loc else []})
    return [{**e, "loc": tuple(e["loc"])[:-1]} if len(e["members"]) > 1 else e for e in merged]


def _is_member(loc: tuple[Any, ...]) -> bool:
    """Whether ``loc`` ends in the tag pydantic gives a union member (a type's name)."""
    return len(loc) > 1 and (str(loc[-1]) in _TYPE_TAGS or "[" in str(loc[-1]))


def _describe(error: Mapping[str, Any]) -> str:
    # a union member's tag such as list[nullable[...]] is pydantic's, not a parameter's
    loc = [str(p) for p in error.get("loc", ()) if p not in _SOURCES and "[" not in str(p)]
    message = " ".join(str(error.get("msg", "invalid value")).split())
    if error.get("type") == "json_invalid":
        detail = (error.get("ctx") or {}).get("error") or message
        return f"the body is not valid JSON ({detail}, at character {loc[-1] if loc else 0})"
    where = ".".join(loc)
    text = f"{where}: {message}" if where else message
    if error.get("type") != "missing" and "input" in error:
        text += f" (got {_clip(error['input'])})"
    return text


def _clip(value: Any) -> str:
    if isinstance(value, Mapping | list | tuple):
        return f"{type(value).__name__} of {len(value)}"
    shown = repr(value)
    if len(shown) > SHOWN_VALUE_CHARS:
        shown = f"{shown[: SHOWN_VALUE_CHARS - 3]}..."
    return " ".join(shown.split())
