"""Forgetting through every door (issue 22 §5): ``wolfie forget`` as a subprocess (exit 2 on
bad input), and the MCP ``forget`` tool through the SDK's own client: offered by a
writable server only, and bounded to its scope on a pinned one."""

from __future__ import annotations

import json

import anyio
import pytest

from packs import Pack
from packs.errors import UnknownMemory
from tests.wolfie.test_cli import wolfie
from tests.wolfie.test_mcp import call, error_of, stdio_session


def _seed(root: str) -> dict[str, str]:
    with Pack.open("agent", root) as pack:
        return {
            "alice": pack.remember("My locker code", "It is 4512", scope="alice").id,
            "alice2": pack.remember("My desk number", "Desk 7", scope="alice").id,
            "bob": pack.remember("My locker code", "It is 9981", scope="bob").id,
            "shared": pack.remember("Where are the lockers", "Basement, by the gym").id,
        }


def test_wolfie_forget_from_the_shell(tmp_path):
    root = str(tmp_path / "packs")
    ids = _seed(root)
    pack = ["--pack", "agent", "--root", root]
    done = wolfie("forget", ids["shared"], *pack, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["memory_ids"] == [ids["shared"]]
    done = wolfie("forget", *pack, "--scope", "alice", "--purge")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Forgot 2 memories" in done.stdout and "purged" in done.stdout
    with Pack.open("agent", root, read_only=True) as reader:
        assert reader.count() == 1 and reader.get(ids["bob"])["id"] == ids["bob"]
        with pytest.raises(UnknownMemory):
            reader.get(ids["alice"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "Give exactly one of memory_ids"),
        (["m_nope"], "no memory ['m_nope']"),
        (["--where", "[1"], "not valid JSON"),
        (["--where", "{}"], "where must be a non-empty object"),
        (["--scope", "bob", "--where", '{"source": "x"}'], "Give exactly one"),
    ],
)
def test_wolfie_forget_exits_2_on_bad_input(tmp_path, args, says):
    root = str(tmp_path / "packs")
    _seed(root)
    done = wolfie("forget", *args, "--pack", "agent", "--root", root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in " ".join(done.stderr.split()) and "Traceback" not in done.stderr
    with Pack.open("agent", root, read_only=True) as reader:
        assert reader.count() == 4  # nothing was forgotten


@pytest.mark.slow
def test_mcp_forget_is_bounded_to_a_pinned_scope(tmp_root):
    ids = _seed(str(tmp_root))

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agent", "--scope", "alice") as pinned:
            tools = {tool.name: tool for tool in (await pinned.list_tools()).tools}
            schema = tools["forget"].input_schema["properties"]
            assert {"memory_ids", "scope", "where", "purge"} <= set(schema)
            refused = await error_of(pinned, "forget", scope="bob")
            assert "pinned to scope 'alice'" in refused
            refused = await error_of(pinned, "forget", memory_ids=[ids["bob"]])
            assert "not rows of scope 'alice'" in refused
            refused = await error_of(pinned, "forget", memory_ids=[ids["shared"]])
            assert "not rows of scope 'alice'" in refused
            refused = await error_of(pinned, "forget", where={"scope": "bob"})
            assert "pinned to scope 'alice'" in refused
            done = await call(pinned, "forget", where={"title": None})  # all of Alice's rows
            assert sorted(done["memory_ids"]) == sorted([ids["alice"], ids["alice2"]])
        async with stdio_session(tmp_root, "--pack", "agent") as session:
            done = await call(session, "forget", memory_ids=[ids["bob"]], purge=True)
            assert done["memory_ids"] == [ids["bob"]] and done["purged"] is True
            left = await call(session, "search", query="where are the lockers")
            assert [item["id"] for item in left["items"]] == [ids["shared"]]
        async with stdio_session(tmp_root, "--pack", "agent", "--read-only") as reader:
            assert "forget" not in {tool.name for tool in (await reader.list_tools()).tools}
            refused = await error_of(reader, "forget", memory_ids=[ids["shared"]])
            assert "unknown tool" in refused.lower()

    anyio.run(main)


def test_mcp_purges_are_bounded_and_coalesce(tmp_root):
    """Bug (issue 31, item 12): a pinned agent could repeat a one-row forget(purge=True),
    and each call rewrote every tenant's text tables and dropped all time travel."""
    with Pack.open("agent", tmp_root, settings={"flush": {"purge_every_seconds": 3.0}}) as pack:
        notes = ("My locker code is 4512", "The printer jams on A3", "Lunch is at noon")
        ids = [pack.remember(note, "noted", scope="alice").id for note in notes]

    async def main() -> list[dict[str, object]]:
        async with stdio_session(tmp_root, "--pack", "agent", "--scope", "alice") as pinned:
            done = [await call(pinned, "forget", memory_ids=[m], purge=True) for m in ids]
            await anyio.sleep(6)  # the queued purge runs while the server serves
            return done

    first, second, third = anyio.run(main)
    assert first["purged"] is True and first["purge_at"] is None
    assert second["purged"] is False and second["purge_at"] is not None
    assert third["purge_at"] == second["purge_at"]  # both wait for one queued run
    with Pack.open("agent", tmp_root, read_only=True) as reader:
        stones = reader.query("forgotten").to_dicts()
        assert len(stones) == 3 and all(stone["purged_at"] for stone in stones)
