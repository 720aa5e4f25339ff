"""Each MCP tool's parameters, described and bounded by the shared table
(:data:`wolfie.params.PARAMS`).

A tool is a plain function; :func:`describe` gives each of its parameters the row of
:data:`PARAMS` that its name picks (a pydantic ``Field``: description, range, length;
a ``tool.name`` row first, where one tool's parameter means something else), so the SDK
publishes them in the tool's input schema and refuses what breaks them before the tool
runs. A parameter with no row is a programming error, raised when the
server is built: add the row to :mod:`wolfie.params` (one line per name, shared by every
tool and REST route using it). Text lengths follow the Pack's ``max_text_chars``; a
signal's name is an enum of the Pack's own reward vocabulary. The table's names stay
importable from here, where they lived before.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from wolfie.params import FILTERS as FILTERS
from wolfie.params import ID_CHARS as ID_CHARS
from wolfie.params import MAX_MEMORY_IDS as MAX_MEMORY_IDS
from wolfie.params import MAX_SOURCES as MAX_SOURCES
from wolfie.params import PARAMS, TEXT
from wolfie.params import Param as Param


def describe(fn: Callable[..., Any], max_text_chars: int, vocabulary: Sequence[str]) -> None:
    """Give each parameter of ``fn`` its :data:`PARAMS` row (``fn.__signature__``)."""
    signature = inspect.signature(fn, eval_str=True)
    described = []
    for param in signature.parameters.values():
        if inspect.isclass(param.annotation) and issubclass(param.annotation, Context):
            described.append(param)  # the SDK's request context, not a client argument
            continue
        row = PARAMS.get(f"{fn.__name__}.{param.name}") or PARAMS.get(param.name)
        if row is None:
            raise KeyError(f"MCP parameter {param.name!r} of {fn.__name__} has no row in PARAMS.")
        limits = dict(row.limits)
        if limits.pop(TEXT, None):
            limits["max_length"] = max_text_chars
        annotation = param.annotation
        if param.name == "name":
            annotation = Literal[tuple(sorted(vocabulary))]
        spec = Field(description=row.description, **limits)
        described.append(param.replace(annotation=Annotated[annotation, spec]))
    # inspect.signature (and so the SDK) reads __signature__ first
    setattr(fn, "__signature__", signature.replace(parameters=described))  # noqa: B010
