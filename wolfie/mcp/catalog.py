"""The MCP server's tools, listed once: name, kind and description.

:func:`wolfie.mcp.server.build_server` registers exactly these (it refuses a tool body
without a row here, and a row without a body), and ``wolfie mcp --help`` is written from
them, so the help can't drift from what the server offers. Nothing heavy is imported:
``wolfie --help`` reads this module.

Kinds: ``read`` tools are served by every server, a read-only one included, and carry
MCP's ``readOnlyHint``; ``status`` reads an ingest run (read-only hint, but only served
where runs can start); ``write`` stores or rewards; ``fetch`` reaches outside the Pack;
``destroy`` changes or removes what is stored (``destructiveHint``: a client may ask the
user first). Descriptions may name ``{filters}``, ``{ingest}`` and ``{lessons}``, filled
in by the server (the filter grammar, the operator's ingest policy, what a sampling
client is asked). The reward verbs' rows come from :mod:`wolfie.reward_verbs`; a reward
tool stores the reward itself before it answers (``flush`` False here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wolfie.reward_verbs import VERBS

Kind = Literal["read", "status", "write", "fetch", "destroy"]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: Kind
    summary: str  # one line, for ``wolfie mcp --help``
    description: str  # what an agent reads in the tool list
    flush: bool | None = False  # True: stored before the answer; None: flushed soon after


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "recall",
        "write",
        "rank and log an episode to reward",
        "Call this BEFORE answering. Returns an `episode_id`, a `prompt` block to put in "
        "your context (lessons first; WARNING items misled before: avoid them) and the "
        "ranked `items` (id, kind, text, similarity, utility, score; start_s/end_s for "
        "media). Keep the episode_id and reward it when the outcome is known. "
        "`filters`: {filters}",
        flush=None,
    ),
    ToolSpec(
        "remember",
        "write",
        "store an interaction (a repeat merges, a correction supersedes)",
        "Store an interaction: what was asked (`intent`), what was done (`response`), how "
        "it turned out (`outcome`); `polarity` 'failure' marks a mistake to warn about. A "
        "near-duplicate that says the same merges into the existing memory; one that says "
        "something else (a correction) supersedes it (`status` 'superseded', `superseded` "
        "names the old memory, now history). With the Pack's admission control on it may "
        "be 'held' (pass your `confidence` and the `episode_id` it comes from) or "
        "'refused', with the `reason`.",
        flush=True,
    ),
    *(ToolSpec(v.name, "write", v.summary, v.description) for v in VERBS),
    ToolSpec(
        "resolve",
        "write",
        "close an episode with its final response",
        "Close an episode with the final `response` (and `success` if known); the response "
        "is also scored against past successes and failures. {lessons}",
    ),
    ToolSpec(
        "distill",
        "write",
        "write lessons now, with your model when it can sample",
        "Write the lessons of `memory_ids` (or of the memories an `episode_id` recalled) "
        "now: your own model writes them if your client supports sampling, else the "
        "built-in template does. Returns what became of each lesson.",
    ),
    ToolSpec(
        "forget",
        "destroy",
        "forget memories, a scope, or what a filter matches",
        "Forget for good: `memory_ids`, or every row of `scope` (its memories and the "
        "episodes recalled in it), or what `where` (columns or metadata: value) matches; "
        "give exactly one. `purge` also removes older stored versions now. A scoped server "
        "forgets only its own scope's rows.",
        flush=True,
    ),
    ToolSpec(
        "revise",
        "destroy",
        "correct a memory in place (same id)",
        "Correct a memory in place (same id): give only the fields to change. A new "
        "`response` or `polarity` ('none' clears it) is a new action whose utility "
        "restarts; `metadata` replaces the old. Only memories of your `scope`.",
        flush=True,
    ),
    ToolSpec(
        "ingest",
        "fetch",
        "start ingesting media or documents the operator allowed",
        "Start ingesting direct media URLs or files, documents or folders of documents "
        "into this Pack. This server may ingest {ingest}; hidden files are never read. "
        "Returns at once with a `run_id`; the run continues in the background (read it "
        "with ingest_status). With a `scope`, the chunks are that scope's only.",
    ),
    ToolSpec(
        "ingest_status",
        "status",
        "how an ingest run is going",
        "How an ingest run is going: running, finished or failed, its counts, each failed "
        "item's error and the tail of its log.",
    ),
    ToolSpec(
        "search",
        "read",
        "rank without logging",
        "Rank the Pack's memories and knowledge for `query` without logging an episode "
        "(read-only; use `recall` when you will give feedback). `filters`: {filters} "
        "`scope` is a user or session id.",
    ),
    ToolSpec(
        "maturity",
        "read",
        "the Pack's five maturity signals and stage",
        "How mature the Pack is: episode count, utility convergence against the EMA noise "
        "floor, hit rate, coverage, feedback density, and the stage (cold, warming, warm).",
    ),
    ToolSpec(
        "history",
        "read",
        "a memory's versions: created, merged, revised",
        "A memory's versions, oldest first: when it was created, merged with a "
        "near-duplicate or revised, what changed (old and new values) and from which call. "
        "Only memories this `scope` can recall.",
    ),
    ToolSpec(
        "tuning",
        "read",
        "the Pack's tuning runs: what was adopted, refused and why",
        "The Pack's tuning runs, newest first (at most `limit`): what the Pack fitted to "
        "its own episodes, whether questions held out from the fit said it was better for "
        "every scope (adopted or refused, and why), the scopes its evidence came from, and "
        "the settings versions before and after. Read-only: an operator tunes and rolls "
        "back with `wolfie tune`.",
    ),
    ToolSpec(
        "held",
        "read",
        "the memories on probation",
        "The memories on probation (the Pack's admission control held them: a low "
        "confidence or a poor track record nearby): stored, not recalled until a repeat or "
        "a positive reward of their episode confirms them. Only what this `scope` sees.",
    ),
)


def served(read_only: bool) -> tuple[ToolSpec, ...]:
    """The tools a server offers: only the ``read`` ones when it is read-only."""
    return tuple(t for t in TOOLS if not read_only or t.kind == "read")


def help_text() -> str:
    """``wolfie mcp --help``'s list of tools, from :data:`TOOLS`."""
    lines = [f"  {t.name}: {t.summary}" for t in TOOLS]
    reads = ", ".join(t.name for t in served(read_only=True))
    destroy = ", ".join(t.name for t in TOOLS if t.kind == "destroy")
    # "\b" keeps click from rewrapping the list into one paragraph
    return (
        f"Tools ({len(TOOLS)}):\n\n\b\n" + "\n".join(lines) + "\n\n"
        f"A --read-only server has only {reads}. {destroy} are marked destructive."
    )
