"""The REST reward routes, ``POST /v1/packs/{pack}/episodes/{episode_id}/VERB``, one per row
of :mod:`wolfie.reward_verbs` (``feedback``, ``signal``, ``outcome``), on writable servers
only. A server pinned with ``--scope`` rewards only episodes recalled in its scope (issue
31)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from packs.pack import Pack
from packs.records import FeedbackResult
from wolfie import front_door
from wolfie.api.deps import EpisodePath, Guard, PackOf, stored
from wolfie.api.models import REWARD_BODIES
from wolfie.front_door import ScopeGuard
from wolfie.reward_verbs import REQUIRED, VERBS, Verb, parameters, signed


def add(api: APIRouter) -> None:
    """Add the reward routes to ``api`` (prefix ``/v1/packs/{pack}``)."""
    for verb in VERBS:
        api.post(
            f"/episodes/{{episode_id}}/{verb.name}",
            response_model=FeedbackResult,
            summary=verb.route_summary,
        )(_route(verb))


def _route(verb: Verb) -> Any:
    """The route of one reward verb: its body's arguments become the verb's reward."""

    def route(episode_id: str, body: Any, pack: Pack, guard: ScopeGuard) -> FeedbackResult:
        arguments = body.model_dump(exclude={"idempotency_key"})
        reward = verb.reward(arguments)
        key, scope = body.idempotency_key, guard(None)
        return stored(
            pack, front_door.reward(pack, episode_id, reward, idempotency_key=key, scope=scope)
        )

    body = REWARD_BODIES[verb.name]
    rows = [("episode_id", EpisodePath), ("body", body), ("pack", PackOf), ("guard", Guard)]
    return signed(route, verb.name, parameters([(*row, REQUIRED) for row in rows]), FeedbackResult)
