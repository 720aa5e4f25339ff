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
- **Read-only**: ``--read-only`` opens the Pack read-only and registers only ``search``
  and ``maturity``.
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

from packs.errors import InvalidInput, WolfieError
from packs.maturity import Maturity
from packs.pack import Pack
from wolfie import agent_tools
from wolfie.agent_tools import Recalled, Remembered, Rewarded
from wolfie.mcp import ops as mcp_ops
from wolfie.mcp.ops import IngestStarted, Resolved

INSTRUCTIONS = """Wolfie is a self-evolving memory. Follow this loop:
1. Before answering, call `recall` with the user's request. Use the returned `prompt`
   (lessons, facts and their track record; items marked WARNING misled before: avoid
   them). Keep the `episode_id`.
2. When the outcome is known, reward the episode: `feedback` (a rating in [-1, 1]),
   `signal` (accepted, edited, ignored, acted_on), `outcome` (a measured amount such as
   a P&L) or `resolve` (the final response, with success if known). Rewards move the
   utility of every recalled memory, so the next recall ranks better.
3. `remember` what was asked, what was done and how it turned out.
Pass the same `scope` (a user or session id) to every call for one user."""

T = TypeVar("T")

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
    pack: Pack, *, scope: str | None = None, ingest_root: str | None = None
) -> MCPServer:
    """An MCP server over an open ``pack``; the write tools only if it is writable."""
    server: MCPServer = MCPServer(
        name="wolfie", title=f"Wolfie Pack {pack.name}", instructions=INSTRUCTIONS
    )
    guard = ScopeGuard(scope)

    def add(fn: Callable[..., Any], description: str, *, flush: bool | None = False) -> None:
        def flushed(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            pack.flush(wait=flush is True)  # acknowledged means stored (None: soon)
            return result

        body = functools.wraps(fn)(flushed) if flush is not False else fn
        server.add_tool(tool_errors(body), name=fn.__name__, description=description)

    def search(
        query: str, k: int | None = None, filters: dict[str, Json] | None = None,
        scope: str | None = None,
    ) -> Recalled:  # fmt: skip
        return mcp_ops.recall(pack, query, k, filters, guard(scope), log=False)

    def maturity() -> Maturity:
        return mcp_ops.maturity(pack)

    add(search, "Rank the Pack's memories and knowledge for `query` without logging an "
        "episode (read-only; use `recall` when you will give feedback). `filters` maps "
        "columns (kind, source, title, signal_polarity, outcome) or metadata keys to "
        "values; `scope` is a user or session id.")  # fmt: skip
    add(maturity, "How mature the Pack is: episode count, utility convergence against the "
        "EMA noise floor, hit rate, coverage, feedback density, and the stage (cold, "
        "warming, warm).")  # fmt: skip
    if pack.read_only:
        return server

    def recall(
        query: str, k: int | None = None, filters: dict[str, Json] | None = None,
        scope: str | None = None,
    ) -> Recalled:  # fmt: skip
        return mcp_ops.recall(pack, query, k, filters, guard(scope), log=True)

    def remember(
        intent: str, response: str, outcome: str | None = None,
        polarity: Literal["success", "failure"] | None = None,
        metadata: dict[str, Json] | None = None, scope: str | None = None,
    ) -> Remembered:  # fmt: skip
        return agent_tools.remember(
            pack, intent, response, outcome=outcome, polarity=polarity, metadata=metadata,
            scope=guard(scope),
        )  # fmt: skip

    def feedback(episode_id: str, rating: float, idempotency_key: str | None = None) -> Rewarded:
        return agent_tools.feedback(pack, episode_id, rating, idempotency_key=idempotency_key)

    def signal(
        episode_id: str, name: str, memory_ids: list[str] | None = None,
        idempotency_key: str | None = None,
    ) -> Rewarded:  # fmt: skip
        return agent_tools.signal(
            pack, episode_id, name, memory_ids, idempotency_key=idempotency_key
        )

    def outcome(episode_id: str, amount: float, idempotency_key: str | None = None) -> Rewarded:
        return mcp_ops.outcome(pack, episode_id, amount, idempotency_key=idempotency_key)

    def resolve(
        episode_id: str, response: str, success: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Resolved:  # fmt: skip
        return mcp_ops.resolve(pack, episode_id, response, success, idempotency_key=idempotency_key)

    def ingest(sources: list[str]) -> IngestStarted:
        return mcp_ops.start_ingest(pack.name, ingest_root, sources)

    add(recall, "Call this BEFORE answering. Returns an `episode_id`, a `prompt` block to "
        "put in your context (lessons first; WARNING items misled before: avoid them) and "
        "the ranked `items` (id, kind, text, similarity, utility, score; start_s/end_s "
        "for media). Keep the episode_id and reward it when the outcome is known.",
        flush=None)  # fmt: skip
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
    add(ingest, "Start ingesting media URLs or files, documents or folders of documents "
        "into this Pack. Returns at once with a `run_id` (the flow run's name); the run "
        "continues in the background.")  # fmt: skip
    return server
