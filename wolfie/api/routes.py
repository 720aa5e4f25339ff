"""The REST routes: thin calls into the front door the MCP server calls too
(:mod:`wolfie.front_door`), or the Pack itself where a door adds nothing, under the same
:class:`~wolfie.front_door.ScopeGuard`. Each returns the engine's record as ``to_dict()``.

Sync handlers: FastAPI runs them on its thread pool, and each Pack handle serialises its
own work. Every write is flushed before it is answered (acknowledged means stored); a
recall's episode is handed to the background flusher (stored within about 0.25 s), as
the MCP server does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import (
    FeedbackResult,
    ForgetReport,
    Recall,
    Record,
    RememberResult,
    RevisionResult,
    json_safe,
)
from wolfie import front_door
from wolfie.api import models
from wolfie.api.errors import PackNotServed
from wolfie.front_door import ScopeGuard
from wolfie.mcp.params import ID_CHARS, PARAMS
from wolfie.results import History, KnowledgeAdded, StoredMemory, TuningHistory

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


def router(writable: bool) -> APIRouter:
    """``/v1/packs/{pack}/...``: the reads on every server, the writes where the Packs
    are writable."""
    api = APIRouter(prefix="/v1/packs/{pack}")
    _reads(api)
    if writable:
        _writes(api)
    return api


def ranked(pack: Pack, body: models.RankBody, guard: ScopeGuard, *, log: bool) -> Recall:
    """A recall (``log``) or a search for ``body``, through the front door."""
    scope = guard(body.scope)
    explain = body.explain is True
    return front_door.recall(
        pack, body.query, body.k, filters=body.filters, scope=scope, log=log, explain=explain
    )


def _reads(api: APIRouter) -> None:
    @api.post("/search", response_model=Recall, summary="Rank without logging an episode")
    def search(body: models.RankBody, pack: PackOf, guard: Guard) -> JSONResponse:
        return answer(ranked(pack, body, guard, log=False))

    @api.get("/memories/{memory_id}", response_model=StoredMemory, summary="One memory")
    def get(
        memory_id: MemoryPath, pack: PackOf, guard: Guard, scope: ScopeQuery = None
    ) -> JSONResponse:
        return answer(front_door.get(pack, memory_id, scope=guard(scope)))

    @api.get("/memories/{memory_id}/history", response_model=History, summary="Its versions")
    def history(
        memory_id: MemoryPath, pack: PackOf, guard: Guard, scope: ScopeQuery = None
    ) -> JSONResponse:
        return answer(front_door.history(pack, memory_id, scope=guard(scope)))

    @api.get("/maturity", response_model=Maturity, summary="Maturity signals and stage")
    def maturity(pack: PackOf) -> JSONResponse:
        return answer(pack.maturity())

    @api.get("/tuning", response_model=TuningHistory, summary="Tuning runs, newest first")
    def tuning(
        pack: PackOf,
        limit: Annotated[int, Query(ge=1, le=1000, description="How many runs.")] = 20,
    ) -> JSONResponse:
        return answer(front_door.tuning(pack, limit))


def _writes(api: APIRouter) -> None:
    def stored(pack: Pack, record: Any, *, wait: bool = True) -> JSONResponse:
        pack.flush(wait=wait)  # acknowledged means stored (a recall: stored soon)
        return answer(record)

    @api.post("/memories", response_model=RememberResult, summary="Remember an interaction")
    def remember(body: models.RememberBody, pack: PackOf, guard: Guard) -> JSONResponse:
        return stored(
            pack,
            front_door.remember(
                pack,
                body.intent,
                body.response,
                outcome=body.outcome,
                polarity=body.polarity,
                metadata=body.metadata,
                source="api",
                scope=guard(body.scope),
                supersedes=body.supersedes,
            ),
        )

    @api.post("/knowledge", response_model=KnowledgeAdded, summary="Add knowledge chunks")
    def knowledge(body: models.KnowledgeBody, pack: PackOf, guard: Guard) -> JSONResponse:
        chunks = [chunk.model_dump(exclude_none=True) for chunk in body.chunks]
        return stored(pack, front_door.add_knowledge(pack, chunks, scope=guard(body.scope)))

    @api.post("/recall", response_model=Recall, summary="Rank and log an episode to reward")
    def recall(body: models.RankBody, pack: PackOf, guard: Guard) -> JSONResponse:
        return stored(pack, ranked(pack, body, guard, log=True), wait=False)

    reward = "/episodes/{episode_id}"

    # A server pinned with --scope rewards only episodes recalled in its scope (issue 31).
    @api.post(f"{reward}/feedback", response_model=FeedbackResult, summary="Rate an episode")
    def feedback(
        episode_id: EpisodePath, body: models.FeedbackBody, pack: PackOf, guard: Guard
    ) -> JSONResponse:
        key, scope = body.idempotency_key, guard(None)
        return stored(
            pack,
            pack.feedback(episode_id, body.rating, idempotency_key=key, scope=scope),
        )

    @api.post(f"{reward}/signal", response_model=FeedbackResult, summary="An implicit signal")
    def signal(
        episode_id: EpisodePath, body: models.SignalBody, pack: PackOf, guard: Guard
    ) -> JSONResponse:
        key, scope = body.idempotency_key, guard(None)
        return stored(
            pack,
            pack.signal(episode_id, body.name, body.memory_ids, idempotency_key=key, scope=scope),
        )

    @api.post(f"{reward}/outcome", response_model=FeedbackResult, summary="A measured outcome")
    def outcome(
        episode_id: EpisodePath, body: models.OutcomeBody, pack: PackOf, guard: Guard
    ) -> JSONResponse:
        key, scope = body.idempotency_key, guard(None)
        return stored(pack, pack.outcome(episode_id, body.amount, idempotency_key=key, scope=scope))

    @api.patch("/memories/{memory_id}", response_model=RevisionResult, summary="Revise in place")
    def revise(
        memory_id: MemoryPath, body: models.ReviseBody, pack: PackOf, guard: Guard
    ) -> JSONResponse:
        return stored(
            pack,
            front_door.revise(
                pack,
                memory_id,
                intent=body.intent,
                response=body.response,
                outcome=body.outcome,
                polarity=body.polarity,
                metadata=body.metadata,
                source="api",
                scope=guard(body.scope),
            ),
        )

    @api.delete("/memories/{memory_id}", response_model=ForgetReport, summary="Forget one")
    def delete(
        memory_id: MemoryPath, pack: PackOf, guard: Guard, purge: bool = False
    ) -> JSONResponse:
        return stored(pack, front_door.forget(pack, [memory_id], purge=purge, pinned=guard.pinned))

    @api.post("/forget", response_model=ForgetReport, summary="Forget ids, a scope or a filter")
    def forget(body: models.ForgetBody, pack: PackOf, guard: Guard) -> JSONResponse:
        return stored(
            pack,
            front_door.forget(
                pack,
                body.memory_ids,
                scope=body.scope,
                where=body.where,
                purge=body.purge,
                pinned=guard.pinned,
            ),
        )
