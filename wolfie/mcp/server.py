"""``wolfie mcp``: a Pack as an MCP server, for agent hosts (IDEs, assistants, frameworks).

Built on the official ``mcp`` SDK (``MCPServer``). One Pack handle serves every call;
the tools are thin: they check the scope, call :mod:`wolfie.agent_tools` (the code path
the CLI's ``remember``, ``feedback`` and ``signal`` share) and return typed results.

- **The loop an agent follows**: ``recall`` before answering, then ``feedback`` (or
  ``signal``, ``outcome``, ``resolve``) with the recall's ``episode_id`` once the outcome
  is known; ``remember`` what was learned.
- **Scopes**: a call may name a ``scope`` (a user or session). It is stored as metadata
  and enforced in recall filters (``packs/store/scopes.py``). A server started with a scope is
  pinned to it: a call naming another scope is refused.
- **Read-only**: ``--read-only`` opens the Pack read-only and registers only the reads:
  ``search``, ``maturity`` and ``history``. The read tools carry MCP's ``readOnlyHint``.
- **Parameters**: every one has a description and limits in the input schema
  (:mod:`wolfie.mcp.params`), so a client sees the rating range, ``k``'s bounds and the
  Pack's signal names before it calls.
- **Ingest**: only what the operator allowed (``--ingest-root``, ``--ingest-url-prefix``;
  nothing without them), at most ``--max-ingest-runs`` at once, each source within its
  size limit (:mod:`wolfie.mcp.ingest_runs`, ``packs/ingest/policy.py``); a scoped call's
  chunks belong to its scope. ``ingest_status`` reads a run back.
- **Errors**: a ``WolfieError`` becomes a tool error carrying its message; the SDK turns
  any other exception into a tool error too, so no call crashes the server.
- **Durability**: every write tool flushes before it answers, so an acknowledged write
  is stored (or the call returned an error). ``recall`` hands its episode to the
  background flusher as it answers (stored within about 0.25 s, a burst of recalls sharing
  one flush; a flush before answering was most of the call's time, issue 24), so
  ``feedback`` on it works from any process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from packs.errors import InvalidInput, WolfieError
from packs.ingest.policy import IngestPolicy
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import FeedbackResult, ForgetReport, Recall, RememberResult, RevisionResult
from wolfie import agent_tools, corrections, forget_tool
from wolfie.corrections import History
from wolfie.mcp import ops as mcp_ops
from wolfie.mcp.ingest_runs import IngestRuns, IngestStarted, IngestStatus
from wolfie.mcp.ops import Resolved
from wolfie.mcp.params import FILTERS, describe

INSTRUCTIONS = """Wolfie is a self-evolving memory. Follow this loop:
1. Before answering, call `recall` with the user's request. Use the returned `prompt`
   (lessons, facts and their track record; items marked WARNING misled before: avoid
   them). Keep the `episode_id`.
2. When the outcome is known, reward the episode: `feedback` (a rating in [-1, 1]),
   `signal` (accepted, edited, ignored, acted_on), `outcome` (a measured amount such as
   a P&L) or `resolve` (the final response, with success if known). Rewards move the
   utility of every recalled memory, so the next recall ranks better.
3. `remember` what was asked, what was done and how it turned out.
4. When a memory proves wrong, `revise` it (same id) rather than remember a contradiction;
   `history` shows its versions.
Pass the same `scope` (a user or session id) to every call for one user."""

T = TypeVar("T")
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
FETCH = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
# changes or removes what is stored (a client may ask the user first)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Json = str | int | float | bool | None


class ScopeGuard:
    """The scope a call runs in: the server's pinned scope, or the one the call names."""

    def __init__(self, pinned: str | None) -> None:
        self.pinned = pinned

    def __call__(self, requested: str | None) -> str | None:
        if self.pinned is None:
            return requested
        if requested is not None and requested != self.pinned:
            raise InvalidInput(
                f"This server is pinned to scope {self.pinned!r}; a call can't use "
                f"scope {requested!r}."
            )
        return self.pinned


def tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """A WolfieError becomes an MCP tool error carrying its clear message."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except WolfieError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


def build_server(
    pack: Pack, *, scope: str | None = None, runs: IngestRuns | None = None
) -> MCPServer:
    """An MCP server over an open ``pack``; the write tools only if it is writable.
    ``runs`` starts ingest runs within the operator's policy (default: none allowed)."""
    server: MCPServer = MCPServer(
        name="wolfie", title=f"Wolfie Pack {pack.name}", instructions=INSTRUCTIONS
    )
    guard = ScopeGuard(scope)
    runs = runs or IngestRuns(pack.name, None, IngestPolicy())
    limits = (pack.settings.max_text_chars, tuple(pack.settings.rewards.vocabulary))

    def add(
        fn: Callable[..., Any], description: str, *, flush: bool | None = False,
        annotations: ToolAnnotations = WRITE,
    ) -> None:  # fmt: skip
        def flushed(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            pack.flush(wait=flush is True)  # acknowledged means stored (None: soon)
            return result

        describe(fn, *limits)
        body = functools.wraps(fn)(flushed) if flush is not False else fn
        server.add_tool(tool_errors(body), name=fn.__name__, description=description,
                        annotations=annotations)  # fmt: skip

    def search(
        query: str, k: int | None = None, filters: dict[str, Json] | None = None,
        scope: str | None = None,
    ) -> Recall:  # fmt: skip
        return mcp_ops.recall(pack, query, k, filters, guard(scope), log=False)

    def maturity() -> Maturity:
        return mcp_ops.maturity(pack)

    def history(memory_id: str, scope: str | None = None) -> History:
        return corrections.history(pack, memory_id, scope=guard(scope))

    add(search, "Rank the Pack's memories and knowledge for `query` without logging an "
        "episode (read-only; use `recall` when you will give feedback). `filters`: "
        f"{FILTERS} `scope` is a user or session id.", annotations=READ)  # fmt: skip
    add(maturity, "How mature the Pack is: episode count, utility convergence against the "
        "EMA noise floor, hit rate, coverage, feedback density, and the stage (cold, "
        "warming, warm).", annotations=READ)  # fmt: skip
    add(history, "A memory's versions, oldest first: when it was created, merged with a "
        "near-duplicate or revised, what changed (old and new values) and from which call. "
        "Only memories this `scope` can recall.", annotations=READ)  # fmt: skip
    if pack.read_only:
        return server

    def recall(
        query: str, k: int | None = None, filters: dict[str, Json] | None = None,
        scope: str | None = None,
    ) -> Recall:  # fmt: skip
        return mcp_ops.recall(pack, query, k, filters, guard(scope), log=True)

    def remember(
        intent: str, response: str, outcome: str | None = None,
        polarity: Literal["success", "failure"] | None = None,
        metadata: dict[str, Json] | None = None, scope: str | None = None,
    ) -> RememberResult:  # fmt: skip
        return agent_tools.remember(
            pack, intent, response, outcome=outcome, polarity=polarity, metadata=metadata,
            scope=guard(scope),
        )  # fmt: skip

    def feedback(
        episode_id: str, rating: float, idempotency_key: str | None = None
    ) -> FeedbackResult:
        return agent_tools.feedback(pack, episode_id, rating, idempotency_key=idempotency_key)

    def signal(
        episode_id: str, name: str, memory_ids: list[str] | None = None,
        idempotency_key: str | None = None,
    ) -> FeedbackResult:  # fmt: skip
        return agent_tools.signal(
            pack, episode_id, name, memory_ids, idempotency_key=idempotency_key
        )

    def outcome(
        episode_id: str, amount: float, idempotency_key: str | None = None
    ) -> FeedbackResult:
        return mcp_ops.outcome(pack, episode_id, amount, idempotency_key=idempotency_key)

    def resolve(
        episode_id: str, response: str, success: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Resolved:  # fmt: skip
        return mcp_ops.resolve(pack, episode_id, response, success, idempotency_key=idempotency_key)

    def forget(
        memory_ids: list[str] | None = None, scope: str | None = None,
        where: dict[str, Json] | None = None, purge: bool = False,
    ) -> ForgetReport:  # fmt: skip
        return forget_tool.forget(
            pack, memory_ids, scope=scope, where=where, purge=purge, pinned=guard.pinned
        )

    def revise(
        memory_id: str, intent: str | None = None, response: str | None = None,
        outcome: str | None = None, polarity: Literal["success", "failure", "none"] | None = None,
        metadata: dict[str, Json] | None = None, scope: str | None = None,
    ) -> RevisionResult:  # fmt: skip
        return corrections.revise(
            pack, memory_id, intent=intent, response=response, outcome=outcome,
            polarity=polarity, metadata=metadata, source="mcp", scope=guard(scope),
        )  # fmt: skip

    def ingest(sources: list[str], scope: str | None = None) -> IngestStarted:
        return runs.start(sources, guard(scope))

    def ingest_status(run_id: str, scope: str | None = None) -> IngestStatus:
        return runs.status(run_id, guard(scope))

    add(recall, "Call this BEFORE answering. Returns an `episode_id`, a `prompt` block to "
        "put in your context (lessons first; WARNING items misled before: avoid them) and "
        "the ranked `items` (id, kind, text, similarity, utility, score; start_s/end_s "
        "for media). Keep the episode_id and reward it when the outcome is known. "
        f"`filters`: {FILTERS}", flush=None)  # fmt: skip
    add(remember, "Store an interaction: what was asked (`intent`), what was done "
        "(`response`), how it turned out (`outcome`); `polarity` 'failure' marks a "
        "mistake to warn about. Near-duplicates merge into the existing memory.",
        flush=True)  # fmt: skip
    add(feedback, "Reward a recall's episode once you know how it went: `rating` in "
        "[-1, 1], +1 helped, -1 misled. Every recalled memory's utility moves. An "
        "`idempotency_key` makes retries safe.", flush=True)  # fmt: skip
    add(signal, "Implicit feedback on an episode: `name` is accepted, edited, ignored or "
        "acted_on (or the Pack's own vocabulary); `memory_ids` limits it to the items it "
        "concerns.", flush=True)  # fmt: skip
    add(outcome, "A measured outcome of an episode (e.g. a P&L): the reward is "
        "tanh(amount / the Pack's outcome scale).", flush=True)  # fmt: skip
    add(resolve, "Close an episode with the final `response` (and `success` if known); "
        "the response is also scored against past successes and failures.",
        flush=True)  # fmt: skip
    add(forget, "Forget for good: `memory_ids`, or every row of `scope` (its memories and "
        "the episodes recalled in it), or what `where` (columns or metadata: value) matches; "
        "give exactly one. `purge` also removes older stored versions now. A scoped server "
        "forgets only its own scope's rows.", flush=True, annotations=DESTROY)  # fmt: skip
    add(revise, "Correct a memory in place (same id): give only the fields to change. A "
        "new `response` or `polarity` ('none' clears it) is a new action whose utility "
        "restarts; `metadata` replaces the old. Only memories of your `scope`.",
        flush=True, annotations=DESTROY)  # fmt: skip
    add(ingest, "Start ingesting direct media URLs or files, documents or folders of "
        f"documents into this Pack. This server may ingest {runs.policy.describe()}; "
        "hidden files are never read. Returns at once with a `run_id`; the run continues "
        "in the background (read it with ingest_status). With a `scope`, the chunks are "
        "that scope's only.", annotations=FETCH)  # fmt: skip
    add(ingest_status, "How an ingest run is going: running, finished or failed, its "
        "counts, each failed item's error and the tail of its log.", annotations=READ)  # fmt: skip
    return server
