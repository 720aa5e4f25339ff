"""``wolfie mcp``: a Pack as an MCP server, for agent hosts (IDEs, assistants, frameworks).

Built on the official ``mcp`` SDK (``MCPServer``). One Pack handle serves every call;
the tools are thin: they check the scope, call :mod:`wolfie.front_door` (the code path
the CLI and the REST API share) and return typed results.

- **The loop an agent follows**: ``recall`` before answering, then ``feedback`` (or
  ``signal``, ``outcome``, ``resolve``) with the recall's ``episode_id`` once the outcome
  is known; ``remember`` what was learned.
- **Scopes**: a call may name a ``scope`` (a user or session). It is stored as metadata
  and enforced in recall filters (``packs/store/scopes.py``). A server started with a scope is
  pinned to it: a call naming another scope is refused.
- **Read-only**: ``--read-only`` opens the Pack read-only and registers only the reads:
  ``search``, ``maturity``, ``history`` and ``held``. The read tools carry MCP's
  ``readOnlyHint``.
- **Parameters**: every one has a description and limits in the input schema
  (:mod:`wolfie.mcp.params`), so a client sees the rating range, ``k``'s bounds and the
  Pack's signal names before it calls.
- **Ingest**: only what the operator allowed (``--ingest-root``, ``--ingest-url-prefix``;
  nothing without them), at most ``--max-ingest-runs`` at once, each source within its
  size limit (:mod:`wolfie.mcp.ingest_runs`, ``packs/ingest/policy.py``); a scoped call's
  chunks belong to its scope. ``ingest_status`` reads a run back.
- **Errors**: a ``WolfieError`` becomes a tool error carrying its message, and a schema
  violation one line naming the parameter and its limit (:class:`WolfieServer`); the SDK
  turns any other exception into a tool error too, so no call crashes the server.
- **Tools**: listed once, in :mod:`wolfie.mcp.catalog` (``wolfie mcp --help`` reads it);
  the reward tools (``feedback``, ``signal``, ``outcome``) are built from the rows of
  :mod:`wolfie.reward_verbs`, the table the REST routes and CLI commands share.
- **Lessons**: ``feedback``, ``outcome`` and ``resolve`` store the reward, then ask a
  client that declares ``sampling`` for the lessons it earned (:mod:`wolfie.mcp.lessons`);
  ``distill`` asks on demand.
- **Durability**: every write tool flushes before it answers, so an acknowledged write
  is stored (or the call returned an error). ``recall`` hands its episode to the
  background flusher as it answers (stored within about 0.25 s, a burst of recalls sharing
  one flush; a flush before answering was most of the call's time, issue 24), so
  ``feedback`` on it works from any process.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from packs.errors import InvalidInput, WolfieError
from packs.ingest.policy import IngestPolicy
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import FeedbackResult, ForgetReport, Recall, RememberResult, RevisionResult
from wolfie import front_door
from wolfie.front_door import ScopeGuard, episode_memories
from wolfie.input_errors import one_line
from wolfie.mcp import catalog
from wolfie.mcp.ingest_runs import IngestRuns, IngestStarted, IngestStatus
from wolfie.mcp.lesson_limits import LessonLimits
from wolfie.mcp.lessons import SampledLessons
from wolfie.mcp.params import FILTERS, describe
from wolfie.mcp.stdio import AnsweringServer
from wolfie.results import (
    Distilled,
    HeldList,
    History,
    Resolved,
    Rewarded,
    TuningHistory,
    with_lessons,
)
from wolfie.reward_verbs import REQUIRED, VERBS, Verb, signed

INSTRUCTIONS = """Wolfie is a self-evolving memory. Follow this loop:
1. Before answering, call `recall` with the user's request. Use the returned `prompt`
   (lessons, facts and their track record; items marked WARNING misled before: avoid
   them). Keep the `episode_id`.
2. When the outcome is known, reward the episode: `feedback` (a rating in [-1, 1]),
   `signal` (accepted, edited, ignored, acted_on), `outcome` (a measured amount such as
   a P&L) or `resolve` (the final response, with success if known). Rewards move the
   utility of every recalled memory, so the next recall ranks better.
3. `remember` what was asked, what was done and how it turned out.
4. When a fact changes, `remember` the new one for the same situation: it supersedes the
   old memory, which stays only as history. To fix a wording in place, `revise` it (same
   id); `history` shows a memory's versions.
Pass the same `scope` (a user or session id) to every call for one user."""

T = TypeVar("T")
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
FETCH = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
# changes or removes what is stored (a client may ask the user first)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
ANNOTATIONS: dict[catalog.Kind, ToolAnnotations] = dict(
    read=READ, status=READ, write=WRITE, fetch=FETCH, destroy=DESTROY
)

Json = str | int | float | bool | None
LESSONS = (
    "If your client supports sampling, the server then asks your model to write the "
    "lesson of each memory the reward moved (`lessons` says what became of each); the "
    "reward is stored first either way."
)


class WolfieServer(AnsweringServer):
    """The SDK's server, with a schema violation told on one line: the parameter, the
    limit it broke and what was sent (the SDK's text is pydantic's multi-line dump with
    a documentation URL)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            message = f"Error executing tool {name}: InvalidInput: {one_line(cause.errors())}"
            raise ToolError(message) from cause


def tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """A WolfieError becomes an MCP tool error carrying its clear message."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def waiting(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except WolfieError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc

        return waiting  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except WolfieError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


def build_server(
    pack: Pack,
    *,
    scope: str | None = None,
    runs: IngestRuns | None = None,
    lessons: LessonLimits | None = None,
) -> MCPServer:
    """An MCP server over an open ``pack``: the tools of :mod:`wolfie.mcp.catalog`, the
    write tools only if it is writable. ``runs`` starts ingest runs within the operator's
    policy (default: none allowed); ``lessons`` bounds the lessons asked of sampling
    clients (wolfie/mcp/lessons.py)."""
    server = WolfieServer(
        name="wolfie", title=f"Wolfie Pack {pack.name}", instructions=INSTRUCTIONS
    )
    guard = ScopeGuard(scope)
    runs = runs or IngestRuns(pack.name, None, IngestPolicy())
    limits = (pack.settings.max_text_chars, tuple(pack.settings.rewards.vocabulary))
    bodies = {fn.__name__: fn for fn in _tools(pack, guard, runs, SampledLessons(pack, lessons))}
    if set(bodies) != {spec.name for spec in catalog.TOOLS}:
        raise KeyError(f"MCP tools {sorted(bodies)} differ from wolfie/mcp/catalog.py.")
    texts = {"filters": FILTERS, "ingest": runs.policy.describe(), "lessons": LESSONS}
    for spec in catalog.served(pack.read_only):
        fn = bodies[spec.name]
        describe(fn, *limits)
        body = _flushed(pack, fn, spec.flush) if spec.flush is not False else fn
        server.add_tool(
            tool_errors(body),
            name=spec.name,
            description=spec.description.format(**texts),
            annotations=ANNOTATIONS[spec.kind],
        )
    return server


def _flushed(pack: Pack, fn: Callable[..., T], wait: bool | None) -> Callable[..., T]:
    """``fn``, then a flush: acknowledged means stored (``wait=None``: stored soon)."""

    @functools.wraps(fn)
    def flushed(*args: Any, **kwargs: Any) -> T:
        result = fn(*args, **kwargs)
        pack.flush(wait=wait is True)
        return result

    return flushed


def _tools(
    pack: Pack, guard: ScopeGuard, runs: IngestRuns, sampled: SampledLessons
) -> list[Callable[..., Any]]:
    """The tool bodies: thin calls into the front door (:mod:`wolfie.front_door`)."""

    def search(
        query: str,
        k: int | None = None,
        filters: dict[str, Json] | None = None,
        scope: str | None = None,
        explain: bool = False,
    ) -> Recall:
        return front_door.recall(
            pack, query, k, filters=filters, scope=guard(scope), log=False, explain=explain
        )

    def maturity() -> Maturity:
        return pack.maturity()

    def history(memory_id: str, scope: str | None = None) -> History:
        return front_door.history(pack, memory_id, scope=guard(scope))

    def recall(
        query: str,
        k: int | None = None,
        filters: dict[str, Json] | None = None,
        scope: str | None = None,
        explain: bool = False,
    ) -> Recall:
        return front_door.recall(
            pack, query, k, filters=filters, scope=guard(scope), log=True, explain=explain
        )

    def held(scope: str | None = None) -> HeldList:
        return front_door.held(pack, scope=guard(scope))

    def tuning(limit: int = 20) -> TuningHistory:
        return front_door.tuning(pack, limit)

    def remember(
        intent: str,
        response: str,
        outcome: str | None = None,
        polarity: Literal["success", "failure"] | None = None,
        metadata: dict[str, Json] | None = None,
        scope: str | None = None,
        confidence: float | None = None,
        episode_id: str | None = None,
        supersedes: str | None = None,
    ) -> RememberResult:
        return front_door.remember(
            pack,
            intent,
            response,
            outcome=outcome,
            polarity=polarity,
            metadata=metadata,
            scope=guard(scope),
            confidence=confidence,
            episode_id=episode_id,
            supersedes=supersedes,
        )

    async def resolve(
        episode_id: str,
        response: str,
        ctx: Context,
        success: bool | None = None,
        idempotency_key: str | None = None,
        scope: str | None = None,
    ) -> Resolved:
        scope = guard(scope)
        done = await anyio.to_thread.run_sync(
            lambda: front_door.resolve(
                pack, episode_id, response, success, idempotency_key=idempotency_key, scope=scope
            )
        )
        await anyio.to_thread.run_sync(pack.flush)  # stored before any sampling
        notes = await sampled.earned(ctx, episode_id, list(done.rewarded), scope)
        return dataclasses.replace(done, lessons=notes)

    async def distill(
        ctx: Context,
        memory_ids: list[str] | None = None,
        episode_id: str | None = None,
        scope: str | None = None,
    ) -> Distilled:
        scope = guard(scope)

        def chosen() -> list[str]:
            if (memory_ids is None) == (episode_id is None):
                raise InvalidInput("distill takes memory_ids or an episode_id (one of them).")
            ids = memory_ids or episode_memories(pack, episode_id or "")
            for memory_id in ids:
                front_door.require_visible(pack, memory_id, scope)
            return ids

        ids = await anyio.to_thread.run_sync(chosen)
        return Distilled(await sampled.distill(ctx, ids, episode_id, scope))

    def forget(
        memory_ids: list[str] | None = None,
        scope: str | None = None,
        where: dict[str, Json] | None = None,
        purge: bool = False,
    ) -> ForgetReport:
        return front_door.forget(
            pack, memory_ids, scope=scope, where=where, purge=purge, pinned=guard.pinned
        )

    def revise(
        memory_id: str,
        intent: str | None = None,
        response: str | None = None,
        outcome: str | None = None,
        polarity: Literal["success", "failure", "none"] | None = None,
        metadata: dict[str, Json] | None = None,
        scope: str | None = None,
    ) -> RevisionResult:
        return front_door.revise(
            pack,
            memory_id,
            intent=intent,
            response=response,
            outcome=outcome,
            polarity=polarity,
            metadata=metadata,
            source="mcp",
            scope=guard(scope),
        )

    def ingest(sources: list[str], scope: str | None = None) -> IngestStarted:
        return runs.start(sources, guard(scope))

    def ingest_status(run_id: str, scope: str | None = None) -> IngestStatus:
        return runs.status(run_id, guard(scope))

    reads: list[Callable[..., Any]] = [search, maturity, history, held, tuning]
    rewards = [_reward_tool(pack, guard, sampled, verb) for verb in VERBS]
    writes: list[Callable[..., Any]] = [
        recall,
        remember,
        *rewards,
        resolve,
        distill,
        forget,
        revise,
    ]
    return [*reads, *writes, ingest, ingest_status]


def _reward_tool(
    pack: Pack, guard: ScopeGuard, sampled: SampledLessons, verb: Verb
) -> Callable[..., Any]:
    """The tool of one reward verb (:mod:`wolfie.reward_verbs`): its arguments, the episode
    id, an idempotency key and a scope. The reward is stored before it answers, and a verb
    that earns lessons then asks a sampling client for them (``scope``'s)."""

    async def tool(
        ctx: Context,
        episode_id: str,
        idempotency_key: str | None = None,
        scope: str | None = None,
        **arguments: Any,
    ) -> FeedbackResult | Rewarded:
        scope = guard(scope)
        reward = verb.reward(arguments)
        key = idempotency_key
        result = await anyio.to_thread.run_sync(
            lambda: front_door.reward(pack, episode_id, reward, idempotency_key=key, scope=scope)
        )
        await anyio.to_thread.run_sync(pack.flush)  # stored before any sampling
        if not verb.lessons:
            return result
        moved = [] if result.duplicate else list(result.track_records)
        return with_lessons(result, await sampled.earned(ctx, result.episode_id, moved, scope))

    parameters = verb.signature(
        lambda arg, annotation: annotation,
        head=[("episode_id", str, REQUIRED)],
        middle=[("ctx", Context, REQUIRED)],
        tail=[("idempotency_key", str | None, None), ("scope", str | None, None)],
    )
    return signed(tool, verb.name, parameters, Rewarded if verb.lessons else FeedbackResult)
