"""Typed settings read from the environment at the edges (flows, deployments, CLI).

Unknown ``WOLFIE_LLM_*`` keys are rejected; the API key is a secret that never shows in
``repr``, logs or task parameters.
"""

from __future__ import annotations

from typing import Literal

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from packs.errors import InvalidSettings
from packs.lessons.writers import LessonWriter, OpenAIChatLessonWriter, TemplateLessonWriter


class LessonWriterSettings(BaseSettings):
    """``WOLFIE_LLM_WRITER`` (template|openai), ``WOLFIE_LLM_BASE_URL``,
    ``WOLFIE_LLM_MODEL``, ``WOLFIE_LLM_API_KEY``, ``WOLFIE_LLM_TIMEOUT_S``."""

    model_config = SettingsConfigDict(env_prefix="WOLFIE_LLM_", extra="forbid")

    writer: Literal["template", "openai"] = "template"
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = 30.0


def build_lesson_writer(name: str | None = None) -> LessonWriter:
    """The lesson writer named ``name`` (default: ``WOLFIE_LLM_WRITER``), configured."""
    settings = LessonWriterSettings()
    chosen = name or settings.writer
    if chosen == "template":
        return TemplateLessonWriter()
    if chosen == "openai":
        if not settings.base_url or not settings.model:
            raise InvalidSettings(
                "The openai lesson writer needs WOLFIE_LLM_BASE_URL and WOLFIE_LLM_MODEL."
            )
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return OpenAIChatLessonWriter(
            settings.base_url, settings.model, key, timeout_s=settings.timeout_s
        )
    raise InvalidSettings(f"Unknown lesson writer {chosen!r}; use 'template' or 'openai'.")
