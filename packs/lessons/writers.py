"""Lesson writers: distil a memory and its reward history into a reusable lesson.

Two writers sit behind one small interface:

- :class:`TemplateLessonWriter`, built in and offline: deterministic, it condenses the
  intent, response and outcome into a templated sentence and says that it is a template.
  A failing memory becomes an "Avoid ..." lesson. The track record is not copied into the
  lesson: it would go stale, and the prompt block shows the live one next to each item.
- :class:`OpenAIChatLessonWriter`: any OpenAI-compatible ``/v1/chat/completions``
  endpoint, with the versioned prompt ``packs/lessons/prompts/lesson-v1.md``
  (:func:`lesson_prompt`, which the MCP server also sends to a client's model over
  sampling: ``wolfie/mcp/lessons.py``).

A writer that fails (timeout, HTTP error, an empty or overlong answer) raises
:class:`LessonWriterError`; the lessons flow then keeps the old lesson and records why.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packs.errors import LessonWriterError, TransientLessonWriterError
from packs.http_json import post_json
from packs.lazy import lazy_module
from packs.validation import lone_surrogate

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy_module("httpx")  # loaded on first use: it brings click and rich (issue 45)

PROMPT_VERSION = "lesson-v1"
PROMPT_PATH = Path(__file__).parent / "prompts" / f"{PROMPT_VERSION}.md"
MAX_LESSON_CHARS = 600  # twice the prompt's limit: room for a verbose model, not an essay
SAMPLING_WRITER = "mcp-sampling"  # lesson_log's writer for a lesson an MCP client's model wrote
FAILURE_UTILITY = -0.1  # hand-set: a track record below this reads as "avoid"


# scheme://user:password@host -> scheme://***@host, wherever a URL appears in a text.
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@")


def redact_url_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ``***``."""
    return _URL_CREDENTIALS.sub(r"\g<scheme>***@", text)


def split_url_credentials(url: str) -> tuple[str, httpx.BasicAuth | None]:
    """``url`` without its user info, and that user info as HTTP basic auth (what httpx
    would have sent), so the password never sits in a URL that an error may quote."""
    parsed = httpx.URL(url)
    if not parsed.userinfo:
        return url, None
    auth = httpx.BasicAuth(parsed.username, parsed.password)
    return str(parsed.copy_with(username=None, password=None)), auth


@dataclass(frozen=True)
class LessonEvidence:
    """What a writer sees of one memory."""

    memory_id: str
    kind: str
    intent: str
    response: str | None
    outcome: str | None
    polarity: str | None
    utility: float
    confidence: float
    reward_count: int
    recent_rewards: tuple[float, ...]  # newest last
    previous_lesson: str | None

    @property
    def failing(self) -> bool:
        return self.polarity == "failure" or self.utility <= FAILURE_UTILITY


class LessonWriter(ABC):
    name: str

    @abstractmethod
    def write(self, evidence: LessonEvidence) -> str:
        """The lesson text for ``evidence``; raises :class:`LessonWriterError`."""


def check_lesson(text: object, writer: str) -> str:
    """A usable lesson: a non-empty single string of at most MAX_LESSON_CHARS."""
    if not isinstance(text, str):
        raise LessonWriterError(f"{writer} returned {type(text).__name__}, not text.")
    lesson = " ".join(text.replace("\x00", "").split())
    at = lone_surrogate(lesson)
    if at is not None:  # no table can store it; the other lessons of the run go on
        raise LessonWriterError(f"{writer} returned invalid Unicode (a lone surrogate at {at}).")
    if not lesson:
        raise LessonWriterError(f"{writer} returned an empty lesson.")
    if len(lesson) > MAX_LESSON_CHARS:
        raise LessonWriterError(
            f"{writer} returned {len(lesson)} characters; a lesson is at most {MAX_LESSON_CHARS}."
        )
    return lesson


class TemplateLessonWriter(LessonWriter):
    """Offline and deterministic: a template, and it says so."""

    name = "template"

    def write(self, evidence: LessonEvidence) -> str:
        outcome = f" Outcome: {_sentence(evidence.outcome, 80)}" if evidence.outcome else ""
        situation = _clip(evidence.intent, 120)
        did = _sentence(evidence.response, 160) if evidence.response else ""
        if evidence.kind == "knowledge":
            verb = "Avoid relying on" if evidence.failing else "Rely on"
            body = f"{verb} this passage for similar questions: {_sentence(evidence.intent, 160)}"
        elif evidence.failing:
            body = f"Avoid repeating this in situations like '{situation}'" + (
                f": {did}" if did else "."
            )
        else:
            body = f"When '{situation}': {did or 'repeat the recorded response.'}"
        return check_lesson(f"[template lesson] {body}{outcome}", self.name)


def _clip(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sentence(text: str | None, limit: int) -> str:
    """``text`` clipped, ending with exactly one sentence mark."""
    clipped = _clip(text, limit)
    return clipped if clipped.endswith((".", "!", "?")) else clipped + "."


def lesson_prompt(evidence: LessonEvidence, template: str | None = None) -> str:
    """The versioned lesson prompt (:data:`PROMPT_PATH`) filled with ``evidence``. The
    memory's texts go in as data: ``str.format`` reads the template's fields only."""
    text = PROMPT_PATH.read_text(encoding="utf-8") if template is None else template
    recent = ", ".join(f"{r:+.2f}" for r in evidence.recent_rewards) or "none"
    return text.format(
        kind=evidence.kind,
        intent=evidence.intent,
        response=evidence.response or "-",
        outcome=evidence.outcome or "-",
        polarity=evidence.polarity or "-",
        utility=evidence.utility,
        reward_count=evidence.reward_count,
        confidence=evidence.confidence,
        recent_rewards=recent,
        previous_lesson=evidence.previous_lesson or "-",
    )


class OpenAIChatLessonWriter(LessonWriter):
    """An OpenAI-compatible chat-completions endpoint. The key is never logged."""

    name = "openai-chat"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
    ) -> None:
        # Credentials in the URL travel as basic auth, never inside the URL that errors,
        # logs and the lesson_log quote.
        url, auth = split_url_credentials(base_url.rstrip("/") + "/chat/completions")
        self._url = url
        self._model = model
        self._retries = retries
        self._backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, auth=auth)
        self._prompt = PROMPT_PATH.read_text(encoding="utf-8")

    def __repr__(self) -> str:
        return f"OpenAIChatLessonWriter(url={self._url!r}, model={self._model!r})"

    def close(self) -> None:
        self._client.close()

    def prompt(self, evidence: LessonEvidence) -> str:
        return lesson_prompt(evidence, self._prompt)

    def write(self, evidence: LessonEvidence) -> str:
        payload = {
            "model": self._model,
            "messages": [{"role": "user", "content": self.prompt(evidence)}],
            "temperature": 0,
        }
        body = self._post(payload)
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LessonWriterError(f"{self._url} answered without choices[0].message.") from exc
        return check_lesson(text, self.name)

    def _post(self, payload: dict[str, Any]) -> Any:
        return post_json(
            self._client,
            self._url,
            payload,
            retries=self._retries,
            backoff_s=self._backoff_s,
            permanent=LessonWriterError,
            transient=TransientLessonWriterError,
        )
