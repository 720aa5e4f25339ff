"""What every REST route depends on: the served Packs and scope, the path and query
parameters they share, and the one way a route answers: the record's JSON (``to_dict()``,
flushed first for a write: acknowledged means stored), validated by FastAPI against the
record the route declares as its ``response_model`` (:class:`RecordRoute`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request
from fastapi.datastructures import DefaultPlaceholder
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import PlainSerializer, ValidatorFunctionWrapHandler, WrapValidator

from packs.errors import PackNotServed
from packs.pack import Pack
from packs.records import json_safe
from wolfie.front_door import ScopeGuard
from wolfie.params import ID_CHARS, PARAMS

PackPath = Annotated[str, Path(description="The Pack's name, as `wolfie api --pack` named it.")]
EpisodePath = Annotated[
    str, Path(description=PARAMS["episode_id"].description, min_length=1, max_length=ID_CHARS)
]
MemoryPath = Annotated[
    str, Path(description=PARAMS["memory_id"].description, min_length=1, max_length=ID_CHARS)
]
ScopeQuery = Annotated[
    str | None, Query(description=PARAMS["scope"].description, min_length=1, max_length=256)
]


@dataclass(frozen=True)
class Served:
    """What the app serves (``app.state.served``): the open Packs by name, and the scope
    every call is bound to (``wolfie api --scope``)."""

    packs: Mapping[str, Pack]
    guard: ScopeGuard

    @property
    def writable(self) -> bool:
        return not any(handle.read_only for handle in self.packs.values())


def served_pack(pack: PackPath, request: Request) -> Pack:
    """The Pack a path names, if this server serves it (whatever else the path holds)."""
    packs = request.app.state.served.packs
    if pack not in packs:
        raise PackNotServed(
            f"This server serves no Pack {pack!r}; it serves {', '.join(sorted(packs))}."
        )
    return packs[pack]


def scope_guard(request: Request) -> ScopeGuard:
    guard: ScopeGuard = request.app.state.served.guard
    return guard


PackOf = Annotated[Pack, Depends(served_pack)]
Guard = Annotated[ScopeGuard, Depends(scope_guard)]


def _checked(answer: Any, validate: ValidatorFunctionWrapHandler) -> Any:
    """A record's JSON (``to_dict()``), checked against the record: what the route writes."""
    if dataclasses.is_dataclass(answer) and not isinstance(answer, type):
        answer = json_safe(answer)
    validate(answer)
    return answer


CHECKED = WrapValidator(_checked)
# A lambda: pydantic infers no return type from it, so the schema stays the record's own.
AS_WRITTEN = PlainSerializer(lambda answer: answer)


class RecordRoute(APIRoute):
    """A route answering with a record (a dataclass, its declared ``response_model``):
    FastAPI validates the record's JSON (``to_dict()``) against it (a mismatch is a 500,
    logged) and writes the JSON it checked, as the other doors write it (an ``OMIT_NONE`` field
    left out while None, datetimes as ``isoformat()``), through ``json.dumps``: pydantic's
    own JSON writer spells some floats otherwise (``1e-5``, not ``1e-05``). Writing the
    checked JSON, not the validated record again, keeps the bytes and costs no second
    ``to_dict()`` (about 1 ms for ten recalled items)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        model = options.get("response_model")
        if dataclasses.is_dataclass(model) and isinstance(model, type):
            options["response_model"] = Annotated[model, CHECKED, AS_WRITTEN]
        if isinstance(options.get("response_class"), DefaultPlaceholder):
            options["response_class"] = JSONResponse  # FastAPI's default: pydantic's writer
        super().__init__(path, endpoint, **options)


def stored(pack: Pack, record: Any, *, wait: bool = True) -> Any:
    """A write's record, after its flush (a recall's: handed to the background flusher)."""
    pack.flush(wait=wait)  # acknowledged means stored (a recall: stored soon)
    return record
