"""The REST routes: thin calls into the front door the MCP server calls too
(:mod:`wolfie.front_door`), or the Pack itself where a door adds nothing, under the same
:class:`~wolfie.front_door.ScopeGuard`. Each returns the engine's record as ``to_dict()``.

Sync handlers: FastAPI runs them on its thread pool, and each Pack handle serialises its
own work. Every write is flushed before it is answered (acknowledged means stored); a
recall's episode is handed to the background flusher (stored within about 0.25 s), as
the MCP server does.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import ForgetReport, Recall, RememberResult, RevisionResult
from wolfie import front_door
from wolfie.api import models, reward_routes
from wolfie.api.deps import (
    Guard,
    MemoryPath,
    PackOf,
    ScopeQuery,
    answer,
    stored,
)
from wolfie.front_door import ScopeGuard
from wolfie.results import History, KnowledgeAdded, StoredMemory, TuningHistory


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

    reward_routes.add(api)

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
