"""Values Python itself can't take, through the public API (issue 31, items 9 and 13):
integers beyond what Python prints (4,300 digits) or a Pack stores (int64), nesting deep
enough to exhaust Python's recursion, datetimes that leave Python's range in UTC, a time
zone that raises, and one whose offset changes between calls. Each is a ``WolfieError``
that leaves the Pack unchanged, never a bare ``ValueError``, ``RecursionError``,
``OverflowError`` or ``RuntimeError``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

import pytest

from packs import Pack, WolfieError
from packs.errors import InvalidFilter, InvalidInput
from tests.support.packs import table_versions

HUGE = 10**5000
BIG = 2**64  # prints, but no int64 column or tag compares it as stored


def deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


class Raising(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        raise RuntimeError("a broken time zone")

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)


class Flipping(tzinfo):
    """UTC-23h at its first reading, UTC+23h at every later one."""

    def __init__(self) -> None:
        self.calls = 0

    def utcoffset(self, dt: datetime | None) -> timedelta:
        self.calls += 1
        return timedelta(hours=-23 if self.calls == 1 else 23)

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)


@pytest.fixture
def known(pack: Pack) -> str:
    return pack.remember("Restart the worker after a deploy", "systemctl restart worker").id


CALLS = {
    "remember metadata 10**5000": lambda p: p.remember("q", "r", metadata={"k": HUGE}),
    "remember metadata 2**64": lambda p: p.remember("q", "r", metadata={"k": BIG}),
    "recall metadata 10**5000": lambda p: p.recall("deploy", metadata={"k": HUGE}),
    "search where 10**5000": lambda p: p.search("deploy", where={"source_position": HUGE}),
    "search where 50k deep": lambda p: p.search("deploy", where={"id": deep(50_000)}),
    "search metadata 50k deep": lambda p: p.search("deploy", metadata={"k": deep(50_000)}),
    "forget where 50k deep": lambda p: p.forget(where={"source": deep(50_000)}),
    "forget where 10**5000": lambda p: p.forget(where={"k": HUGE}),
    "forget ids 50k deep": lambda p: p.forget(deep(50_000)),
    "query where 10**5000": lambda p: p.query("memories", where={"usage_count": HUGE}),
    "signal ids 50k deep": lambda p: p.signal("ep_x", "accepted", deep(50_000)),
    "add_knowledge metadata 10**5000": lambda p: p.add_knowledge(
        [{"text": "t", "source": "s", "position": 0, "metadata": {"k": HUGE}}]
    ),
    "revise metadata 10**5000": lambda p: p.revise(
        p.query("memories", columns=["id"])["id"][0], metadata={"k": HUGE}
    ),
    "expires_at past 9999 in UTC": lambda p: p.remember(
        "q", "r", expires_at=datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5)))
    ),
    "expires_at with a raising tzinfo": lambda p: p.remember(
        "q", "r", expires_at=datetime(2999, 1, 1, tzinfo=Raising())
    ),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=list(CALLS))
def test_a_value_python_cant_take_is_a_wolfie_error(pack: Pack, known: str, call):
    """Bug (issue 31, 9): metadata 10**5000 raised ValueError, a 50,000-deep filter
    RecursionError, an expires_at past year 9999 OverflowError and a raising tzinfo
    RuntimeError, each from deep inside the engine."""
    before = table_versions(pack)
    with pytest.raises(WolfieError) as caught:
        call(pack)
    assert isinstance(caught.value, InvalidInput | InvalidFilter | LookupError)
    assert table_versions(pack) == before
    assert pack.count(kind="memory") == 1


def test_a_time_zone_whose_offset_changes_is_read_once(pack: Pack):
    """Bug (issue 31, 13): expiry read the offset once to check "in the future" and again
    to convert to UTC, so a tzinfo that changed between the two stored a memory already
    expired: remembered, and never recalled."""
    zone = Flipping()
    wall = (datetime.now(UTC) - timedelta(hours=20)).replace(tzinfo=zone)  # +3 h at -23 h
    memory = pack.remember("Rotate the signing key", "make rotate-keys", expires_at=wall).id
    stored = pack.get(memory)["expires_at"]
    assert stored > datetime.now(UTC) + timedelta(hours=2)  # the first reading, kept
    assert [item.id for item in pack.search("rotate the signing key").items] == [memory]
