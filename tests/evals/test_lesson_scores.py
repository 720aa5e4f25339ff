"""Lessons you can score (issue 30): the reference episodes, the metric on hand-worked
cases, and ``wolfie lessons score`` for the template, an OpenAI-compatible endpoint and a
sampling client (the SDK client with its ``sampling_callback``)."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent

from evals.lesson_scores import (
    DEFAULT_EPISODES,
    ReferenceEpisode,
    load_episodes,
    score_writer,
    stance_of,
)
from packs.errors import InvalidInput
from tests.support.json_server import Reply, chat_reply, json_server
from tests.support.mcp_session import REPO, mcp_env
from tests.wolfie.test_cli import wolfie

EPISODES = load_episodes()
BY_INTENT = {e.intent: e for e in EPISODES}


def test_the_reference_set_covers_domains_and_stances() -> None:
    assert len(EPISODES) >= 50 and len({e.id for e in EPISODES}) == len(EPISODES)
    assert set(Counter(e.domain for e in EPISODES).values()) == {9}
    for e in EPISODES:
        assert (e.stance == "avoid") == (e.polarity == "failure") == (e.evidence().failing)
        assert len(e.reference) <= 400 and e.reference.count(". ") <= 1  # the prompt's rule
        assert e.reference.startswith("Avoid:") == (e.stance == "avoid")
    assert (DEFAULT_EPISODES.parent / "README.md").read_text().count("Provenance") >= 1


def test_stance_reads_the_opening_words() -> None:
    assert stance_of("[template lesson] Avoid repeating this in situations like 'x'.") == "avoid"
    assert stance_of("Never add to a losing position.") == "avoid"
    assert stance_of("Wait for the retest, not the breakout.") == "do"


@pytest.mark.slow
def test_the_score_is_rouge_l_where_the_stance_agrees() -> None:
    first = EPISODES[1]  # "Avoid: clearing a full log disk by hand; ..."
    assert first.stance == "avoid"
    echoed = score_writer("echo", [first], {first.id: first.reference})
    assert (echoed.score, echoed.rouge_l, echoed.stance_agreement) == (1.0, 1.0, 1.0)
    assert echoed.cosine == pytest.approx(1.0, abs=1e-5)
    flipped = first.reference.removeprefix("Avoid: ").capitalize()
    wrong = score_writer("flip", [first], {first.id: flipped})
    assert wrong.score == 0.0 and wrong.stance_agreement == 0.0
    assert wrong.rouge_l > 0.8 and wrong.cosine > 0.8  # what ROUGE or cosine alone would say
    # ROUGE-L by hand: "wait for the retest" / "wait for a retest": LCS = wait, for, retest
    made = ReferenceEpisode(
        "x", "d", "i", "r", "o", "success", (1.0,), "Wait for the retest.", "do"
    )
    hand = score_writer("hand", [made], {"x": "Wait for a retest."})
    assert hand.score == pytest.approx(0.75)  # P = R = 3/4
    missing = score_writer("none", [made], {}, {"x": "timeout"})
    assert (missing.score, missing.written, missing.lessons[0].error) == (0.0, 0, "timeout")


def test_a_malformed_episode_is_refused_with_its_place(tmp_path: Path) -> None:
    row = json.loads(DEFAULT_EPISODES.read_text(encoding="utf-8").splitlines()[1])
    bad = tmp_path / "episodes.jsonl"
    bad.write_text(json.dumps({**row, "stance": "do"}) + "\n")  # its reference says Avoid
    with pytest.raises(InvalidInput, match=r"episodes\.jsonl:1"):
        load_episodes(bad)


def _json(done) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_cli_scores_the_template_and_an_endpoint(tmp_path: Path) -> None:
    template = _json(wolfie("lessons", "score", "--out", str(tmp_path), "--json"))
    assert template["writer"] == "template" and template["written"] == len(EPISODES)
    assert template["score"] == pytest.approx(0.418, abs=0.0005)  # docs/lessons.md
    assert (tmp_path / "lesson-scores-template.md").exists()

    def reply(path: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        prompt = body["messages"][0]["content"]
        intent = re.search(r"- Situation: (.*)", prompt)
        return chat_reply(BY_INTENT[intent.group(1)].reference if intent else "?")

    with json_server(reply) as server:
        env = {"WOLFIE_LLM_API_KEY": "sk-test-secret"}
        done = wolfie(
            "lessons",
            "score",
            "--writer",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "local-7b",
            "--limit",
            "6",
            "--out",
            str(tmp_path),
            "--json",
            env=env,
        )
        assert len(server.requests) == 6
    best = _json(done)
    assert (best["score"], best["model"], best["written"]) == (1.0, "local-7b", 6)
    with json_server(lambda p, b, h: Reply(status=400, body={"error": "no"})):
        failing = _json(
            wolfie(
                "lessons",
                "score",
                "--writer",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--limit",
                "2",
                "--out",
                str(tmp_path),
                "--json",
            )
        )
    assert (failing["score"], failing["written"]) == (0.0, 0)
    refused = wolfie("lessons", "score", "--writer", "gpt")
    assert refused.returncode == 2 and "--writer must be one of" in refused.stderr


@pytest.mark.slow
def test_the_cli_scores_a_sampling_client(tmp_path: Path) -> None:
    """``wolfie lessons score --writer sampling`` is an MCP server: the SDK client
    connects, declares sampling and calls ``score_lessons``."""

    async def model(ctx: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        intent = re.search(r"- Situation: (.*)", params.messages[0].content.text)
        text = BY_INTENT[intent.group(1)].reference if intent else "?"
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model="host-model-3"
        )

    args = [
        "-m",
        "wolfie.cli",
        "lessons",
        "score",
        "--writer",
        "sampling",
        "--limit",
        "4",
        "--out",
        str(tmp_path),
    ]

    async def main() -> tuple[dict[str, Any], bool]:
        params = StdioServerParameters(
            command=sys.executable, args=args, env=mcp_env(tmp_path), cwd=str(REPO)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, sampling_callback=model) as session,
        ):
            await session.initialize()
            scored = (await session.call_tool("score_lessons", {})).structured_content
        async with stdio_client(params) as (read, write), ClientSession(read, write) as plain:
            await plain.initialize()  # a client without sampling: nothing to score
            refused = (await plain.call_tool("score_lessons", {})).is_error
        return scored, refused

    scored, refused = anyio.run(main)
    assert (scored["writer"], scored["model"], scored["written"]) == ("sampling", "host-model-3", 4)
    assert scored["score"] == 1.0 and refused
    assert json.loads((tmp_path / "lesson-scores-sampling.json").read_text())["episodes"] == 4
