"""Lesson writers: the offline template and the OpenAI-compatible adapter against a
local server that answers in the OpenAI chat-completions format."""

from __future__ import annotations

import pytest

from packs.lessons.writers import (
    PROMPT_PATH,
    LessonEvidence,
    LessonWriterError,
    OpenAIChatLessonWriter,
    TemplateLessonWriter,
    TransientLessonWriterError,
)
from tests.support.json_server import Reply, chat_reply, json_server

GOOD = LessonEvidence(
    "m_1",
    "memory",
    "Stock broke out while I was away",
    "Waited for the retest, then bought",
    "win +2R",
    "success",
    0.6,
    0.7,
    5,
    (1.0, 1.0, 0.5),
    None,
)
BAD = LessonEvidence(
    "m_2",
    "memory",
    "Missed the breakout and chased",
    "Bought the high without a stop",
    "loss -1.4R",
    "failure",
    -0.5,
    0.6,
    4,
    (-1.0, -1.0),
    "old lesson",
)


def test_template_writer_is_deterministic_and_honest():
    writer = TemplateLessonWriter()
    lesson = writer.write(GOOD)
    assert lesson == writer.write(GOOD)
    assert lesson.startswith("[template lesson] When 'Stock broke out while I was away'")
    assert "win +2R" in lesson  # the outcome; the live track record is the prompt's job


def test_template_writer_turns_failures_into_avoid_lessons():
    lesson = TemplateLessonWriter().write(BAD)
    assert lesson.startswith("[template lesson] Avoid repeating this") and "win" not in lesson


def test_prompt_is_a_versioned_file_with_every_field():
    text = PROMPT_PATH.read_text()
    for field in ("{intent}", "{response}", "{outcome}", "{utility", "{previous_lesson}"):
        assert field in text
    assert PROMPT_PATH.name == "lesson-v1.md"


def test_openai_writer_sends_the_prompt_and_returns_the_lesson():
    with json_server(lambda path, payload, headers: chat_reply("Avoid: chasing highs.")) as s:
        writer = OpenAIChatLessonWriter(s.url, "test-model", "sk-secret-key")
        assert writer.write(BAD) == "Avoid: chasing highs."
        (request,) = s.requests
        assert request["path"] == "/v1/chat/completions"
        assert request["payload"]["model"] == "test-model"
        prompt = request["payload"]["messages"][0]["content"]
        assert "Missed the breakout and chased" in prompt and "-0.50" in prompt
        assert request["headers"]["authorization"] == "Bearer sk-secret-key"
        assert "sk-secret-key" not in repr(writer)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body={"choices": []}),
        Reply(body={"unexpected": True}),
        Reply(body=b"<html>login</html>"),
        chat_reply("   "),
        chat_reply("x" * 2000),
        Reply(status=401, body={"error": "bad key"}),
    ],
)
def test_openai_writer_garbage_is_a_clear_error(reply):
    with json_server(lambda path, payload, headers: reply) as s:
        writer = OpenAIChatLessonWriter(s.url, "m", "sk-secret-key", retries=0)
        with pytest.raises(LessonWriterError) as caught:
            writer.write(GOOD)
        assert "sk-secret-key" not in str(caught.value)


def test_openai_writer_timeout_is_transient():
    with json_server(lambda path, payload, headers: Reply(delay_s=2.0, body={})) as s:
        writer = OpenAIChatLessonWriter(s.url, "m", timeout_s=0.2, retries=1, backoff_s=0.01)
        with pytest.raises(TransientLessonWriterError, match="kept failing"):
            writer.write(GOOD)
