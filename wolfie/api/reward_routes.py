"""The REST reward routes: ``/v1/packs/{pack}/episodes/{episode_id}/...``, on writable
servers only. A server pinned with ``--scope`` rewards only episodes recalled in its scope
(issue 31)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from packs.records import FeedbackResult
from wolfie.api import models
from wolfie.api.deps import EpisodePath, Guard, PackOf, stored


def add(api: APIRouter) -> None:
    """Add the reward routes to ``api`` (prefix ``/v1/packs/{pack}``)."""
    reward = "/episodes/{episode_id}"

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
