"""The REST routes: thin calls into the front door the MCP server calls too
(:mod:`wolfie.front_door`), or the Pack itself where a door adds nothing, under the same
:class:`~wolfie.front_door.ScopeGuard`. Two module-level routers: :data:`reads`, on every
server, and :data:`writes`, which the app includes only where the Packs are writable (a
read-only server has no write route, in its schema neither). Each handler returns its
record, which FastAPI validates and writes as its ``to_dict()`` JSON against the record
the route declares (:class:`~wolfie.api.deps.RecordRoute`).

Sync handlers: FastAPI runs them on its thread pool, and each Pack handle serialises its
own work. Every write is flushed before it is answered (acknowledged means stored); a
recall's episode is handed to the background flusher (stored within about 0.25 s), as
the MCP server does.
"""

from __future__ import annotations

import warnings
from typing import Annotated

from fastapi import APIRouter, Query

from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import ForgetReport, Recall, RememberResult, RevisionResult
from wolfie import front_door
from wolfie.api import models, reward_routes
from wolfie.api.deps import (
    Guard,
    MemoryPath,
    PackOf,
    RecordRoute,
    ScopeQuery,
    stored,
)
from wolfie.front_door import ScopeGuard
from wolfie.results import History, KnowledgeAdded, StoredMemory, TuningHistory

PREFIX = "/v1/packs/{pack}"
reads = APIRouter(prefix=PREFIX, route_class=RecordRoute)
writes = APIRouter(prefix=PREFIX, route_class=RecordRoute)


def router(writable: bool) -> APIRouter:
    """Deprecated (one release): include :data:`reads` and, if writable, :data:`writes`."""
    warnings.warn(
        "wolfie.api.routes.router() is deprecated; include routes.reads and routes.writes.",
        DeprecationWarning,
        stacklevel=2,
    )
    api = APIRouter()
    api.include_router(reads)
    if writable:
        api.include_router(writes)
    return api


def ranked(pack: Pack, body: models.RankBody, guard: ScopeGuard, *, log: bool) -> Recall:
    """A recall (``log``) or a search for ``body``, through the front door."""
    scope = guard(body.scope)
    explain = body.explain is True
    return front_door.recall(
        pack, body.query, body.k, filters=body.filters, scope=scope, log=log, explain=explain
    )


@reads.post("/search", response_model=Recall, summary="Rank without logging an episode")
def search(body: models.RankBody, pack: PackOf, guard: Guard) -> Recall:
    return ranked(pack, body, guard, log=False)


@reads.get("/memories/{memory_id}", response_model=StoredMemory, summary="One memory")
def get(
    memory_id: MemoryPath, pack: PackOf, guard: Guard, scope: ScopeQuery = None
) -> StoredMemory:
    return front_door.get(pack, memory_id, scope=guard(scope))


@reads.get("/memories/{memory_id}/history", response_model=History, summary="Its versions")
def history(memory_id: MemoryPath, pack: PackOf, guard: Guard, scope: ScopeQuery = None) -> History:
    return front_door.history(pack, memory_id, scope=guard(scope))


@reads.get("/maturity", response_model=Maturity, summary="Maturity signals and stage")
def maturity(pack: PackOf) -> Maturity:
    return pack.maturity()


@reads.get("/tuning", response_model=TuningHistory, summary="Tuning runs, newest first")
def tuning(
    pack: PackOf,
    limit: Annotated[int, Query(ge=1, le=1000, description="How many runs.")] = 20,
) -> TuningHistory:
    return front_door.tuning(pack, limit)


@writes.post("/memories", response_model=RememberResult, summary="Remember an interaction")
def remember(body: models.RememberBody, pack: PackOf, guard: Guard) -> RememberResult:
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


@writes.post("/knowledge", response_model=KnowledgeAdded, summary="Add knowledge chunks")
def knowledge(body: models.KnowledgeBody, pack: PackOf, guard: Guard) -> KnowledgeAdded:
    chunks = [chunk.model_dump(exclude_none=True) for chunk in body.chunks]
    return stored(pack, front_door.add_knowledge(pack, chunks, scope=guard(body.scope)))


@writes.post("/recall", response_model=Recall, summary="Rank and log an episode to reward")
def recall(body: models.RankBody, pack: PackOf, guard: Guard) -> Recall:
    return stored(pack, ranked(pack, body, guard, log=True), wait=False)


reward_routes.add(writes)  # /episodes/{episode_id}/...: here, to keep the schema's order


@writes.patch("/memories/{memory_id}", response_model=RevisionResult, summary="Revise in place")
def revise(
    memory_id: MemoryPath, body: models.ReviseBody, pack: PackOf, guard: Guard
) -> RevisionResult:
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


@writes.delete("/memories/{memory_id}", response_model=ForgetReport, summary="Forget one")
def delete(memory_id: MemoryPath, pack: PackOf, guard: Guard, purge: bool = False) -> ForgetReport:
    return stored(pack, front_door.forget(pack, [memory_id], purge=purge, pinned=guard.pinned))


@writes.post("/forget", response_model=ForgetReport, summary="Forget ids, a scope or a filter")
def forget(body: models.ForgetBody, pack: PackOf, guard: Guard) -> ForgetReport:
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
