"""The engine's declared events (packs/events.py, issue 43): what one service announces
reaches the services that hear it, and services.py wires by constructor only."""

from __future__ import annotations

import ast
from pathlib import Path

from packs import Pack, Rating
from packs.events import EngineEvents, Event, Request
from tests.support.packs import SeededEmbedder

ROOT = Path(__file__).resolve().parents[2]


def test_an_event_reaches_every_listener_in_order():
    heard: list[str] = []
    event: Event[[str]] = Event("said")
    event.connect(lambda word: heard.append(f"a:{word}"))
    event.connect(lambda word: heard.append(f"b:{word}"))
    event.emit("hi")
    assert heard == ["a:hi", "b:hi"]


def test_a_request_stops_at_the_first_that_takes_it():
    asked: list[str] = []

    def busy(delay: float) -> bool:
        asked.append("busy")
        return False

    def free(delay: float) -> bool:
        asked.append("free")
        return True

    request: Request[[float]] = Request("flush_wanted")
    assert not request.ask(0.0)  # nobody heard: the caller does it itself
    for listener in (busy, free, busy):
        request.connect(listener)
    assert request.ask(0.0) and asked == ["busy", "free"]


def test_each_handle_has_its_own_events():
    assert EngineEvents().reward_landed is not EngineEvents().reward_landed


def test_services_are_wired_by_their_constructors_only():
    """No attribute of a built service is set afterwards in build_services (a nested
    function, like ``work_by`` applying new settings, is not wiring)."""
    tree = ast.parse((ROOT / "packs" / "services.py").read_text(encoding="utf-8"))
    (build,) = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "build_services"
    ]
    patched = [
        ast.unparse(target)
        for statement in build.body
        if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign)
        for target in (
            statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        )
        for node in ast.walk(target)
        if isinstance(node, ast.Attribute)
    ]
    assert patched == []


def test_a_reward_is_heard_by_the_tuning_service(tmp_path):
    with Pack.open("p", tmp_path, embedder=SeededEmbedder()) as pack:
        pack.remember("a question", "an answer")
        episode = pack.recall("a question").episode_id or ""
        counted = [pack.tuning._rewarded]  # private: the count is what reward_landed moves
        pack.reward(episode, Rating(1.0))
        counted.append(pack.tuning._rewarded)  # private: the same count, after the reward
        assert counted[1] == counted[0] + 1
