"""What an agent host sees of ``wolfie mcp`` before it calls (issue 23): every parameter
described and bounded in the input schema, the read tools marked read-only, and a
filter too large for the engine refused without taking the server down. Driven by the
MCP SDK's own client over stdio."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from packs import Pack
from packs.store.filters import MAX_FILTER_TERMS
from tests.support.mcp_session import call, error_of, stdio_session

pytestmark = pytest.mark.slow


def test_every_tool_parameter_has_a_description_and_limits(tmp_root: Path):
    """Bug: the tool schemas gave parameters titles only: no rating range, no bounds on
    k, no signal names; no tool was marked read-only; recall did not explain filters."""
    with Pack.open("agents", tmp_root, settings={"max_text_chars": 5_000}) as pack:
        vocabulary = sorted(pack.settings.rewards.vocabulary)

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for tool in tools.values():
            assert tool.description, tool.name
            for name, spec in tool.input_schema["properties"].items():
                assert spec.get("description"), f"{tool.name}.{name} has no description"
        props = {name: tool.input_schema["properties"] for name, tool in tools.items()}
        k = props["recall"]["k"]["anyOf"][0]
        assert (k["minimum"], k["maximum"]) == (1, 100)
        rating = props["feedback"]["rating"]
        assert (rating["minimum"], rating["maximum"]) == (-1, 1)
        assert props["signal"]["name"]["enum"] == vocabulary
        assert props["recall"]["query"]["maxLength"] == 5_000  # the Pack's max_text_chars
        assert props["remember"]["intent"]["maxLength"] == 5_000
        assert props["recall"]["scope"]["anyOf"][0]["maxLength"] == 256
        assert props["search"]["filters"]["anyOf"][0]["maxProperties"] == MAX_FILTER_TERMS
        assert props["ingest"]["sources"]["maxItems"] == 100
        read_only = {name for name, tool in tools.items() if tool.annotations.read_only_hint}
        assert read_only == {"search", "maturity", "ingest_status", "history", "held", "tuning"}
        for name in ("recall", "search"):  # both explain filters, in the same words
            assert "metadata key" in tools[name].description
            assert "list of values meaning any of them" in tools[name].description

    anyio.run(main)


def test_40000_filter_keys_get_a_tool_error_and_the_server_lives_on(tmp_root: Path):
    """Bug: a `filters` object of ~40,000 keys segfaulted the server process (a read-only
    one too) in LanceDB's SQL parser. Now a tool error, and the next call works."""
    huge = {f"k{i}": "v" for i in range(40_000)}

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await call(session, "remember", intent="Restart the worker", response="systemctl")
            assert "filter" in await error_of(session, "recall", query="restart", filters=huge)
            assert (await call(session, "recall", query="restart the worker"))["items"]
        async with stdio_session(tmp_root, "--pack", "agents", "--read-only") as session:
            assert "filter" in await error_of(session, "search", query="restart", filters=huge)
            assert (await call(session, "search", query="restart the worker"))["items"]

    anyio.run(main)
