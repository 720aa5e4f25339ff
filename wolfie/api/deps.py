"""What every REST route depends on: the served Packs and scope, the path and query
parameters they share, and the one way a route answers (``to_dict()``, flushed first for
a write: acknowledged means stored)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from packs.errors import PackNotServed
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import Record, json_safe
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


def answer(record: Record | Maturity) -> JSONResponse:
    return JSONResponse(record.to_dict() if isinstance(record, Record) else json_safe(record))


def stored(pack: Pack, record: Any, *, wait: bool = True) -> JSONResponse:
    """A write's answer, after its flush (a recall's: handed to the background flusher)."""
    pack.flush(wait=wait)  # acknowledged means stored (a recall: stored soon)
    return answer(record)
