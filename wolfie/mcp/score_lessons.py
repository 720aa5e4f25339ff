"""``wolfie lessons score --writer sampling``: rate a sampling client's model.

A client's model is reached the way a server reaches it: over MCP sampling. So this
command serves MCP on stdio with one tool, ``score_lessons``; an agent host (or the SDK
client with a ``sampling_callback``) connects to it as to any server and calls the tool,
which asks the client's model for the lesson of each reference episode (the same prompt
and bounds as ``wolfie mcp``'s lessons, no rate limit), scores them against the
references (``evals/lesson_scores.py``), writes the report under ``out`` and returns the
headline figures.
"""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations

from evals.lesson_scores import ReferenceEpisode, WriterScore, save, score_writer
from packs.lessons.writers import LessonWriterError
from wolfie.mcp.lesson_limits import LessonLimits
from wolfie.mcp.lessons import SAMPLING, ask_model


def build_score_server(
    episodes: list[ReferenceEpisode], out: Path, limits: LessonLimits | None = None
) -> MCPServer:
    """An MCP server whose ``score_lessons`` tool rates the calling client's model."""
    server: MCPServer = MCPServer(name="wolfie-lessons-score", title="Score a lesson writer")
    bounds = limits or LessonLimits()

    async def score_lessons(ctx: Context) -> WriterScore:
        if not ctx.session.check_client_capability(SAMPLING):
            raise ValueError("This client does not declare sampling: nothing to score.")
        lessons: dict[str, str] = {}
        failures: dict[str, str] = {}
        models: set[str] = set()
        for episode in episodes:
            try:
                lessons[episode.id], model = await ask_model(ctx, episode.evidence(), bounds)
                models.add(model)
            except (LessonWriterError, MCPError, TimeoutError) as exc:
                failures[episode.id] = f"{type(exc).__name__}: {exc}"[:500]
        named = ", ".join(sorted(models)) or None

        def scored() -> WriterScore:
            result = score_writer("sampling", episodes, lessons, failures, model=named)
            save(result, out)
            return result

        return await anyio.to_thread.run_sync(scored)

    server.add_tool(
        score_lessons,
        name="score_lessons",
        description="Ask your model for the lesson of each reference episode over "
        "sampling and score them against the hand-written references (ROUGE-L F1 where "
        "the do/avoid stance agrees, embedding cosine, stance agreement).",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    return server
