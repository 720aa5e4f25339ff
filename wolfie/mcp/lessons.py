"""Lessons written by the connected agent's own model, over MCP sampling (issue 30).

An agent connected over MCP already has a model. When its client declares the
``sampling`` capability, the server asks that model (``sampling/createMessage``, with the
versioned lesson prompt ``packs/lessons/prompts/lesson-v1.md``) to write the lesson of
each memory a reward just moved (``feedback``, ``outcome``, ``resolve``), or of the
memories ``distill`` names. The lesson is stored with its provenance: the writer
``mcp-sampling``, the model the client named, the prompt version and the episode
(``lesson_log``; ``Pack.get``'s ``lesson_provenance``, ``history``'s "lesson" versions).

Bounds: a lesson is one string of at most ``MAX_LESSON_CHARS`` (the client is asked for
at most ``max_tokens``); at most ``per_minute`` requests per session and ``per_call``
per tool call; each waits ``timeout_s`` at most. A client that can't sample, refuses,
times out or answers something unusable leaves the lesson as it was (the template's,
or none until the batch refresh writes one): the note says why, and the reward was
stored before the server asked. The text is data: checked by
:func:`packs.lessons.writers.check_lesson` and stored as a column value; it never
chooses code, a table or a filter (the memory ids come from the episode).
"""

from __future__ import annotations

import time
import warnings
from collections import deque
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import (
    ClientCapabilities,
    ModelPreferences,
    SamplingCapability,
    SamplingMessage,
    TextContent,
)

from packs.lessons.writers import (
    SAMPLING_WRITER,
    LessonEvidence,
    LessonWriterError,
    TemplateLessonWriter,
    check_lesson,
    lesson_prompt,
)
from packs.pack import Pack
from packs.records import LessonNote
from packs.store import schemas
from packs.validation import lone_surrogate
from wolfie.mcp.lesson_limits import LessonLimits

SAMPLING = ClientCapabilities(sampling=SamplingCapability())
SYSTEM_PROMPT = "You write one short, reusable lesson from an AI agent's experience."
MODEL_CHARS = 200  # a model name as the client gave it, cut here (hand-set)
SESSIONS_TRACKED = 1024  # rate windows kept; the oldest session's is dropped (hand-set)
# Cheap and quick over clever: a lesson is two sentences (the MCP spec's model
# preferences are 0-1 priorities; hand-set).
PREFERENCES = ModelPreferences(cost_priority=0.8, speed_priority=0.8, intelligence_priority=0.4)


class SampledLessons:
    """Asks the connected client's model for lessons, within :class:`LessonLimits`."""

    def __init__(self, pack: Pack, limits: LessonLimits | None = None) -> None:
        self.pack = pack
        self.limits = limits or LessonLimits()
        self._sent: dict[str, deque[float]] = {}  # per session: when it was asked

    async def earned(
        self, ctx: Context, episode_id: str, memory_ids: list[str], scope: str | None
    ) -> tuple[LessonNote, ...]:
        """After a reward by a caller in ``scope``: lessons for the memories it moved
        (memories, not knowledge chunks, at most ``per_call``), the rest kept."""
        if not self.limits.enabled or not memory_ids:
            return ()
        kinds = await anyio.to_thread.run_sync(self._kinds, memory_ids)
        wanted = [m for m in memory_ids if kinds.get(m) == schemas.KIND_MEMORY]
        return await self._write(ctx, wanted, episode_id, scope, fallback=False)

    async def distill(
        self, ctx: Context, memory_ids: list[str], episode_id: str | None, scope: str | None
    ) -> tuple[LessonNote, ...]:
        """Lessons for ``memory_ids`` now, in ``scope``; without sampling the template
        writes them."""
        return await self._write(ctx, memory_ids, episode_id, scope, fallback=True)

    async def _write(
        self,
        ctx: Context,
        memory_ids: list[str],
        episode_id: str | None,
        scope: str | None,
        *,
        fallback: bool,
    ) -> tuple[LessonNote, ...]:
        """A lesson is written in the scope of its writer: a scoped caller's lesson of a
        shared memory is its scope's alone (packs/lessons/one_memory.py), and the
        evidence it is asked with holds only what its scope sees."""
        wanted = list(dict.fromkeys(memory_ids))
        asked, rest = wanted[: self.limits.per_call], wanted[self.limits.per_call :]
        found = await anyio.to_thread.run_sync(self.pack.lessons.evidence, asked, scope)
        episode = (episode_id, scope)
        notes = [await self._one(ctx, evidence, episode, fallback) for evidence in found]
        limit = f"at most {self.limits.per_call} lessons per call"
        return (*notes, *(LessonNote(m, "kept", reason=limit) for m in rest))

    async def _one(
        self,
        ctx: Context,
        evidence: LessonEvidence,
        episode: tuple[str | None, str | None],
        fallback: bool,
    ) -> LessonNote:
        why = self._refusal(ctx)
        if why is None:
            try:
                lesson, model = await self._sample(ctx, evidence)
            except (LessonWriterError, MCPError, TimeoutError) as exc:
                why = _why(exc, self.limits.timeout_s)
            else:
                await self._store(evidence, lesson, SAMPLING_WRITER, model, episode)
                return LessonNote(evidence.memory_id, "written", SAMPLING_WRITER, model)
        if not fallback:
            return LessonNote(evidence.memory_id, "kept", reason=why)
        lesson = TemplateLessonWriter().write(evidence)
        await self._store(evidence, lesson, TemplateLessonWriter.name, None, episode)
        return LessonNote(evidence.memory_id, "template", TemplateLessonWriter.name, reason=why)

    def _refusal(self, ctx: Context) -> str | None:
        """Why this call may not sample (None: it may), counting the request if so."""
        if not ctx.session.check_client_capability(SAMPLING):
            return "the client did not declare the sampling capability"
        now = time.monotonic()
        sent = self._sent.setdefault(session_key(ctx), deque())
        while sent and now - sent[0] >= 60.0:
            sent.popleft()
        if len(sent) >= self.limits.per_minute:
            return f"rate limit: {self.limits.per_minute} lessons a minute per session"
        sent.append(now)
        while len(self._sent) > SESSIONS_TRACKED:
            del self._sent[next(iter(self._sent))]
        return None

    async def _sample(self, ctx: Context, evidence: LessonEvidence) -> tuple[str, str]:
        return await ask_model(ctx, evidence, self.limits)

    async def _store(
        self,
        evidence: LessonEvidence,
        lesson: str,
        writer: str,
        model: str | None,
        episode: tuple[str | None, str | None],
    ) -> None:
        episode_id, scope = episode

        def write() -> None:
            self.pack.lessons.save(
                evidence,
                lesson,
                writer=writer,
                model=model,
                episode_id=episode_id,
                scope=scope,
            )

        await anyio.to_thread.run_sync(write)

    def _kinds(self, memory_ids: list[str]) -> dict[str, str]:
        return {m: self.pack.get(m)["kind"] for m in memory_ids}


async def ask_model(
    ctx: Context, evidence: LessonEvidence, limits: LessonLimits
) -> tuple[str, str]:
    """The client's lesson for ``evidence`` and the model it named, asked over sampling
    with the versioned prompt; raises TimeoutError, MCPError or LessonWriterError."""
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=lesson_prompt(evidence))
    )
    # Sampling is deprecated in the 2026-07-28 protocol revision (SEP-2577); it is what
    # the 2025-11-25 protocol the SDK negotiates offers, and what hosts implement.
    with warnings.catch_warnings(), anyio.fail_after(limits.timeout_s):
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        result = await ctx.session.create_message(
            [message],
            max_tokens=limits.max_tokens,
            system_prompt=SYSTEM_PROMPT,
            temperature=0.0,
            model_preferences=PREFERENCES,
        )
    content: Any = result.content
    if getattr(content, "type", None) != "text":
        raise LessonWriterError(f"the client answered {getattr(content, 'type', '?')}")
    return check_lesson(content.text, SAMPLING_WRITER), _model_name(result.model)


def session_key(ctx: Context) -> str:
    """Which client session a request belongs to: the streamable HTTP session id, or one
    key for a stdio server (one client per process) and for stateless HTTP (all share
    the bound). The SDK's session object is made per request, so it can't be the key."""
    headers = ctx.headers
    if headers is None:
        return "stdio"
    return f"http:{headers.get('mcp-session-id', '')}"


def _why(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"the client's model did not answer within {timeout_s:g} s"
    if isinstance(exc, MCPError):
        return f"the client refused: {str(exc)[:200]}"
    return f"unusable lesson: {str(exc)[:200]}"


def _model_name(model: object) -> str:
    """The model name as data: one line, valid UTF-8, at most MODEL_CHARS."""
    text = " ".join(str(model).split())[:MODEL_CHARS]
    while (at := lone_surrogate(text)) is not None:
        text = text[:at] + "?" + text[at + 1 :]
    return text or "unnamed"
