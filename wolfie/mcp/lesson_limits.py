"""The bounds of lessons asked of sampling clients (``wolfie mcp --lesson-rate``,
``--lesson-timeout``), kept apart from :mod:`wolfie.mcp.lessons` so the command line
reads its defaults without loading the MCP SDK."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LessonLimits:
    """How much sampling one server may ask of its clients (``wolfie mcp`` flags)."""

    enabled: bool = True
    per_minute: int = 6  # hand-set: each request is a model call the user may be asked about
    per_call: int = 3  # hand-set: a recall injects k2 = 3 items by default (MemRL)
    timeout_s: float = 30.0  # hand-set: the OpenAI-compatible writer's timeout
    max_tokens: int = 200  # hand-set: about 800 characters; check_lesson keeps 600
