"""Secrets (S3 keys, LLM keys) never appear in logs, artifacts, exceptions or repr."""

from __future__ import annotations

import logging

import pytest
from prefect.client.orchestration import get_client

from flows.config import LessonWriterSettings, build_lesson_writer
from flows.demo import demo_flow
from flows.learning import pack_health, recompute_utilities, refresh_lessons_flow
from packs import Pack
from packs.store.locations import locate
from tests.support.json_server import chat_reply, json_server
from tests.support.storage import storage_of

S3_SECRET = "SECRETs3Key-7f3a9c1e5b"
S3_KEY_ID = "AKIASECRETID9F8E7D"
LLM_KEY = "sk-SECRETllm-4d2c8b6a"


def everything_said(caplog) -> str:
    """Python log records, and every log line and artifact the Prefect server holds."""
    logs, artifacts = [], []
    with get_client(sync_client=True) as client:
        for reader, into in ((client.read_logs, logs), (client.read_artifacts, artifacts)):
            while True:  # the API pages at 200
                page = reader(limit=200, offset=len(into))
                into.extend(page)
                if len(page) < 200:
                    break
    return "\n".join(
        [r.getMessage() for r in caplog.records]
        + [log.message for log in logs]
        + [str(a.data) + str(a.description) for a in artifacts]
    )


def test_s3_and_llm_keys_never_leak(s3, monkeypatch, caplog):
    caplog.set_level(logging.INFO)  # what Wolfie and Prefect log by default
    root = s3.fresh_root("secrets")
    for name, value in {
        **s3.env,
        "AWS_SECRET_ACCESS_KEY": S3_SECRET,
        "AWS_ACCESS_KEY_ID": S3_KEY_ID,
    }.items():
        monkeypatch.setenv(name, value)
    demo_flow(pack="secret", root=root, epochs=1)
    recompute_utilities(pack="secret", root=root)
    pack_health(pack="secret", root=root)
    with json_server(lambda path, payload, headers: chat_reply("Avoid: chasing.")) as server:
        monkeypatch.setenv("WOLFIE_LLM_BASE_URL", server.url)
        monkeypatch.setenv("WOLFIE_LLM_MODEL", "m")
        monkeypatch.setenv("WOLFIE_LLM_API_KEY", LLM_KEY)
        refresh_lessons_flow(pack="secret", root=root, writer="openai", limit=2)
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {LLM_KEY}"
        writer = build_lesson_writer("openai")
        reprs = [repr(writer), repr(LessonWriterSettings()), str(LessonWriterSettings())]
    with Pack.open("secret", root, read_only=True) as pack:
        reprs += [repr(pack), repr(storage_of(pack).location), repr(locate("secret", root))]
        assert storage_of(pack).location.storage_options["aws_secret_access_key"] == S3_SECRET
    said = everything_said(caplog) + "\n".join(reprs)
    for secret in (S3_SECRET, S3_KEY_ID, LLM_KEY):
        assert secret not in said
    print(
        f"secrets: 3 secrets absent from {len(said.splitlines())} lines of logs, artifacts "
        f"and reprs"
    )


def test_storage_errors_do_not_carry_keys(monkeypatch):
    options = {
        "aws_endpoint": "http://127.0.0.1:9",  # discard port: refused
        "allow_http": "true",
        "aws_region": "us-east-1",
        "aws_access_key_id": S3_KEY_ID,
        "aws_secret_access_key": S3_SECRET,
        "client_max_retries": "0",
    }
    with pytest.raises(OSError) as caught:
        Pack.open("secret", "s3://bucket/prefix", storage_options=options)
    text = "".join([str(caught.value), repr(caught.value), str(caught.value.__cause__)])
    assert S3_SECRET not in text and S3_KEY_ID not in text
