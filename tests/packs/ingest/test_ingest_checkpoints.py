"""The checkpoint store beside a Pack's tables: a local folder, and S3 on a moto server."""

from __future__ import annotations

from pathlib import Path

import pytest

from packs import Pack
from packs.errors import StorageError, TransientStorageError, is_transient
from packs.ingest.checkpoints import CheckpointKeys as Keys
from packs.ingest.target import IngestTarget
from tests.support.media import closed_port
from tests.support.storage import storage_of


def _targets(tmp_root: Path, s3) -> dict[str, IngestTarget]:
    return {
        "local": IngestTarget("talks", str(tmp_root)),
        "s3": IngestTarget("talks", s3.fresh_root(), s3.storage_options),
    }


@pytest.mark.s3
@pytest.mark.parametrize("where", ["local", "s3"])
def test_objects_round_trip_under_the_pack(where, tmp_root, s3, tmp_path):
    target = _targets(tmp_root, s3)[where]
    store = target.checkpoints()
    assert store.uri == f"{target.location().uri}/_ingest"
    assert store.get_json(Keys.media("m1")) is None and not store.exists(Keys.media("m1"))
    store.put_json(Keys.media("m1"), {"title": "Talk", "bytes": 3})
    store.put_json(Keys.transcript_part("m1", "fp", 1), {"index": 1})
    store.put_json(Keys.transcript_part("m1", "fp", 0), {"index": 0})
    assert store.get_json(Keys.media("m1")) == {"title": "Talk", "bytes": 3}
    assert store.list("m1/transcript/fp/") == [
        "m1/transcript/fp/part-00000.json",
        "m1/transcript/fp/part-00001.json",
    ]
    audio = tmp_path / "audio.bin"
    audio.write_bytes(b"\x00\x01" * 1000)
    store.put_file(Keys.audio("m1"), audio)
    assert store.get_file(Keys.audio("m1"), tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == audio.read_bytes()
    assert not store.get_file(Keys.audio("nope"), tmp_path / "none.bin")
    assert (store.local_path(Keys.audio("m1")) is None) == (where == "s3")
    if where == "local":
        leftovers = [p.name for p in (tmp_root / "talks").rglob("*.tmp")]
        assert leftovers == []  # writes go to a temp file, then are renamed into place


@pytest.mark.s3
@pytest.mark.parametrize("where", ["local", "s3"])
def test_checkpoints_do_not_disturb_the_pack_tables(where, tmp_root, s3):
    target = _targets(tmp_root, s3)[where]
    with target.open_pack() as pack:
        tables = storage_of(pack).table_names()
    target.checkpoints().put_json(Keys.media("m1"), {"x": 1})
    options = dict(target.storage_options) if target.storage_options else None
    with Pack.open("talks", target.root, read_only=True, storage_options=options) as pack:
        assert storage_of(pack).table_names() == tables
        assert pack.count() == 0


def test_an_endpoint_that_is_down_is_a_transient_error():
    options = {
        "aws_endpoint": f"http://127.0.0.1:{closed_port()}",
        "aws_region": "us-east-1",
        "aws_access_key_id": "k",
        "aws_secret_access_key": "s",
    }
    store = IngestTarget("talks", "s3://bucket/prefix", options).checkpoints()
    with pytest.raises(TransientStorageError, match="retry later") as down:
        store.put_json("x.json", {})
    assert is_transient(down.value) and "'talks'" in str(down.value)


@pytest.mark.s3
def test_a_missing_bucket_is_a_permanent_error(s3):
    store = IngestTarget("talks", "s3://no-such-bucket/p", s3.storage_options).checkpoints()
    with pytest.raises(StorageError, match="NoSuchBucket") as refused:
        store.put_json("x.json", {})
    assert not is_transient(refused.value)
