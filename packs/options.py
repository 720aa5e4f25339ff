"""The keyword options of the Pack API, as ``TypedDict``s: ``Pack.recall(q, **filters)``.

Each method's options are named once here, so the facade passes them through
(``**options: Unpack[...]``) and the CLI, MCP and REST doors meet one spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Required, TypedDict


class RewardOptions(TypedDict, total=False):
    """What every reward source also takes (``Pack.reward(..., **options)``).

    ``idempotency_key``: a redelivered reward with it is applied once per episode.
    ``scope``: the caller's user or session; only an episode recalled in that scope can
    be rewarded (a server pinned to one user can't reward another's, issue 31).
    """

    idempotency_key: str | None
    scope: str | None


class FeedbackOptions(RewardOptions, total=False):
    """``Pack.feedback``'s (deprecated: ``Rating(stars=)``): ``stars`` 1-5, instead of a
    rating (``(stars - 3) / 2``)."""

    stars: int | None


class ValidationOptions(RewardOptions, total=False):
    """``Pack.validate``'s: the ``hook`` to run instead of the Pack's registered one."""

    hook: Callable[..., Any] | None


class RememberOptions(TypedDict, total=False):
    """``Pack.remember``'s keyword options (each optional):

    - ``polarity``: "success", "failure" (shown as a WARNING) or None;
    - ``source``: the provenance recorded with it (default "api");
    - ``scope``: a user or session: only recalls in that scope see it;
    - ``expires_at``: an aware datetime after which it is never recalled (default: the
      Pack's ``default_ttl_hours``);
    - ``confidence`` (0-1) and ``episode_id`` (the episode it comes from): what admission
      control weighs when the Pack's policy is on (docs/admission.md);
    - ``supersedes``: the id of a memory this one corrects, stated outright: it is stored
      as a new memory (never merged) and supersedes that one (issue 42).
    """

    polarity: str | None
    source: str
    scope: str | None
    expires_at: datetime | None
    confidence: float | None
    episode_id: str | None
    supersedes: str | None


class RewardEventOptions(RewardOptions, total=False):
    """``Pack.apply_reward``'s: the event's ``source`` and ``signal`` (both required),
    ``magnitude`` (the raw amount, kept for audits), ``weight`` (default 1.0) and
    ``memory_ids`` (item-level credit; default every memory the episode injected)."""

    source: Required[str]
    signal: Required[str]
    magnitude: float | None
    weight: float
    memory_ids: list[str] | None


class RecallFilters(TypedDict, total=False):
    """``Pack.recall``/``search``'s filters: ``where`` (column equalities), ``metadata``
    (metadata equalities), ``kind`` (e.g. "knowledge") and ``scope`` (a user or session:
    its rows and the shared ones); ``explore`` (False: this recall never swaps a slate
    member to learn which one answers; ``search`` never does); ``explain`` gives each
    item why it ranked there (``RecalledItem.explain``, packs/recall/explain.py)."""

    where: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    kind: str | None
    scope: str | None
    explore: bool
    explain: bool


class ForgetOptions(TypedDict, total=False):
    """``Pack.forget``'s: every row of ``scope``, or the rows ``where`` matches, instead of
    ids; ``purge`` also removes the bytes from storage (old versions, logs, indexes)."""

    scope: str | None
    where: Mapping[str, Any] | None
    purge: bool


class RevisionChanges(TypedDict, total=False):
    """``Pack.revise``'s: the fields to change (an omitted one is kept) and the ``source``
    recorded in the memory's history (default "api")."""

    intent: str | None
    response: str | None
    outcome: str | None
    polarity: str | None
    metadata: Mapping[str, Any] | None
    source: str
