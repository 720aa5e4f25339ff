"""``wolfie mcp`` over stdio answers every line (issue 31, item 8): a real server
process, raw lines written to its stdin as a misbehaving client would, each answer read
from its stdout. The SDK's client can't send these lines, so this test writes them."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_session import REPO, mcp_command, mcp_env

DEEP = "[" * 1000 + "]" * 1000
HUGE = "9" * 5000


class RawServer:
    """A ``wolfie mcp`` process spoken to line by line."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            mcp_command("--pack", "lines"),
            cwd=REPO,
            env=mcp_env(root),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self.read_lines, daemon=True).start()

    def read_lines(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            pytest.fail(f"no answer within {timeout} s: the client would wait for ever")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def request(request_id: object, method: str, params: str = "{}") -> str:
    return f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "{method}", "params": {params}}}'


def call(tool: str, argument: str) -> str:
    """A tools/call of ``tool`` with its required text and one more ``argument``."""
    needs = {"remember": '"intent": "i", "response": "r"', "search": '"query": "q"', "forget": ""}
    given = ", ".join(part for part in (needs[tool], argument) if part)
    return f'{{"name": "{tool}", "arguments": {{{given}}}}}'


def recall_with(arguments: str) -> str:
    return f'{{"name": "search", "arguments": {arguments}}}'


@pytest.fixture
def server(tmp_root: Path):
    running = RawServer(tmp_root)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw"}}
    running.send(request(1, "initialize", json.dumps(hello)))
    assert running.answer(timeout=120)["id"] == 1
    running.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield running
    running.close()


@pytest.mark.parametrize(
    ("line", "code", "answer_id"),
    [
        (request(11, "tools/call", recall_with('{"query": "caf\\udce9"}')), -32602, 11),
        (request(12, "tools/call", recall_with(f'{{"query": "x", "k": {HUGE}}}')), -32602, 12),
        (request(13, "tools/call", recall_with(f'{{"query": {DEEP}}}')), -32700, 13),
        (request(15, "tools/call", call("remember", f'"metadata": {{"a": {DEEP}}}')), -32700, 15),
        (request(16, "tools/call", call("search", f'"filters": {{"a": {DEEP}}}')), -32700, 16),
        (request('"f"', "tools/call", call("forget", f'"where": {{"a": {DEEP}}}')), -32700, "f"),
        (request(HUGE, "ping"), -32700, None),
        ("this is no JSON", -32700, None),
        ('{"jsonrpc": "2.0", "id": 14, "method": ', -32700, 14),
        ('{"jsonrpc": "2.0", "method": "ping", "params": {"a": ' + DEEP + "}", -32700, None),
    ],
    ids=[
        "surrogate",
        "5,000 digits",
        "1,000 deep",
        "deep metadata",
        "deep filters",
        "deep where",
        "5,000-digit id",
        "no JSON",
        "cut short",
        "deep, no id",
    ],
)
def test_every_line_gets_an_answer_and_the_server_lives_on(server, line, code, answer_id):
    """Bug: a line the SDK could not parse got no answer at all, and the client waited
    for ever (over HTTP the same lines got 400). Issue 42: a line nested past Python's
    limit, or cut short, is answered -32700 with its own id when its top level has one."""
    server.send(line)
    answer = server.answer()
    assert answer["error"]["code"] == code, answer
    assert answer["id"] == answer_id
    server.send(request(99, "ping"))
    assert server.answer() == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_invalid_utf8_bytes_are_read_as_replacement_characters(server):
    """Raw bytes that are no UTF-8 inside a string are read as U+FFFD, as the SDK's
    transport reads them: the call runs and is answered."""
    server.send(request(21, "tools/call", recall_with('{"query": "caf\xff"}')).encode("latin-1"))
    answer = server.answer()
    assert answer["id"] == 21 and "result" in answer
