"""Expiry and staleness (issue 22 §3): an expired memory is never recalled or searched, on
LanceDB's path and on the in-memory scan, and maintain-pack forgets it; a superseded one
is history, not advice; a Pack made before schema 2 still opens and is upgraded.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from packs import Pack
from packs.errors import InvalidInput, InvalidSettings, UnknownMemory
from packs.store import schemas
from tests.support.old_packs import cut_back
from tests.support.storage import storage_of

SOON_S = 3.0


def test_an_expired_memory_is_never_recalled_and_maintain_forgets_it(tmp_root):
    with Pack.open("ttl", tmp_root) as pack:
        keeps = pack.remember("The office wifi password", "It is on the fridge note").id
        soon = pack.remember(
            "The guest wifi password this week",
            "It is tulip-42 until Friday",
            expires_at=datetime.now(UTC) + timedelta(seconds=SOON_S),
        ).id
        assert soon in pack.recall("guest wifi password").ids  # LanceDB's path (deferred)
        assert soon in pack.search("guest wifi password").ids  # the in-memory scan
        time.sleep(SOON_S + 0.5)
        for _ in range(2):  # on the scan, and on LanceDB's path in a fresh handle below
            assert soon not in pack.recall("guest wifi password").ids
            assert soon not in pack.search("guest wifi password").ids
        assert keeps in pack.search("wifi password").ids
    with Pack.open("ttl", tmp_root, read_only=True) as reader:
        assert soon not in reader.search("guest wifi password").ids
        assert reader.get(soon)["id"] == soon  # expired, not yet forgotten
    with Pack.open("ttl", tmp_root) as pack:
        report = pack.upkeep.maintain()
        assert report.expired == 1 and report.purged == 1
        with pytest.raises(UnknownMemory):
            pack.get(soon)
        assert pack.get(keeps)["id"] == keeps


def test_expiry_input_and_the_default_ttl(tmp_root):
    with Pack.open("ttl", tmp_root, settings={"default_ttl_hours": 48}) as pack:
        naive = datetime.now() + timedelta(days=1)  # no time zone: the bad input itself
        for bad in (naive, datetime.now(UTC) - timedelta(seconds=1), "2030-01-01", 5):
            with pytest.raises(InvalidInput):
                pack.remember("A bad expiry", "Refused", expires_at=bad)  # type: ignore[arg-type]
        assert pack.count() == 0
        made = pack.remember("Parking is free this weekend", "Level 2 only").id
        expires = pack.get(made)["expires_at"]
        assert timedelta(hours=47.9) < expires - datetime.now(UTC) < timedelta(hours=48.1)
    with pytest.raises(InvalidSettings):
        Pack.open("ttl2", tmp_root, settings={"default_ttl_hours": 0})


def test_a_superseded_memory_is_history_not_advice(pack):
    old = pack.remember("How do I deploy the API", "Run the deploy.sh script on the box").id
    new = pack.remember("Releasing a new API version", "Merge to main; CI deploys it").id
    other = pack.remember("Where are the API logs", "In the logging bucket", scope="alice").id
    assert old in pack.search("how do I deploy the API").ids
    pack.supersede(old, new, reason="deploys moved to CI")
    for _ in range(2):  # LanceDB's path first, then the in-memory scan
        found = pack.recall("how do I deploy the API")
        assert old not in found.ids and new in found.ids
        assert "deploy.sh" not in found.prompt
    row = pack.get(old)
    assert (row["superseded_by"], row["superseded_reason"]) == (new, "deploys moved to CI")
    with pytest.raises(UnknownMemory):
        pack.supersede("m_missing")
    with pytest.raises(InvalidInput):
        pack.supersede(new, new)
    with pytest.raises(InvalidInput, match="another scope"):
        pack.supersede(new, other)  # a shared memory can't point at Alice's
    stale = pack.remember("The VPN needs the old client", "Install client v1").id
    pack.supersede(stale)  # no longer true, nothing replaces it
    assert stale not in pack.search("which VPN client do I need").ids
    # a near-duplicate of a superseded memory is a new memory, not merged into history
    again = pack.remember("How do I deploy the API", "Run the deploy.sh script on the box!")
    assert again.status == "created"


def test_a_pack_made_before_schema_2_opens_and_is_upgraded(tmp_root):
    with Pack.open("old", tmp_root) as pack:
        made = pack.remember("The printer on floor 3 jams", "Use the tray 2 paper").id
    cut_back(tmp_root, "old", 1)  # as schema 1 left it (tests/support/old_packs.py)
    with Pack.open("old", tmp_root, read_only=True) as reader:  # read as it is
        assert made in reader.search("printer jams").ids
    with Pack.open("old", tmp_root) as pack:  # writable: upgraded
        assert storage_of(pack).read_meta()["schema_version"] == schemas.SCHEMA_VERSION
        assert pack.get(made)["expires_at"] is None
        soon = pack.remember(
            "Printer maintenance today",
            "Floor 3 printer offline",
            expires_at=datetime.now(UTC) + timedelta(hours=1),
        ).id
        assert soon in pack.recall("printer offline").ids
        assert pack.forget([made]).removed["memories"] == 1


def test_a_pack_made_before_schema_4_opens_and_is_upgraded(tmp_root):
    """Schema 4 (issue 30) added the admission columns of ``memories`` and the provenance
    columns of ``lesson_log``: a schema-3 Pack is read as it is, and upgraded when opened
    writable."""
    with Pack.open("old", tmp_root) as pack:
        made = pack.remember("The printer on floor 3 jams", "Use the tray 2 paper").id
        failed = {"at": datetime.now(UTC), "memory_id": made, "writer": "t", "status": "failed"}
        pack.store_lessons([], [failed])
    cut_back(tmp_root, "old", 3)
    with Pack.open("old", tmp_root, read_only=True) as reader:
        assert made in reader.search("printer jams").ids
        assert reader.get(made)["lesson_provenance"] is None
        assert [v.event for v in reader.history(made)] == ["remember"]
    with Pack.open("old", tmp_root) as pack:
        assert storage_of(pack).read_meta()["schema_version"] == schemas.SCHEMA_VERSION
        assert pack.get(made)["held_at"] is None
        assert storage_of(pack).has_column(schemas.LESSON_LOG, "model")
        assert made in pack.recall("printer jams").ids
