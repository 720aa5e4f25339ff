"""Storage faults under the learning writes, on ``s3://`` against moto behind an HTTP proxy
that answers 503 SlowDown or 500 InternalError for a while, or 403 AccessDenied to every
write (read-only credentials).

Transient answers are retried with backoff (by the object-store client, by
``Pack.close`` and by Prefect's retry of transient task failures) and the step then
succeeds; a permanent one raises an error naming the Pack and the step; readers see the
version from before the fault; a read-only handle never sends a write request.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from flows.learning import recompute_utilities
from packs import Pack
from packs.errors import StorageError, TransientStorageError, is_transient
from packs.store import schemas
from tests.support.packs import table_versions
from tests.support.proxy import FaultyHttpProxy, faulty_http_proxy
from tests.support.s3 import S3Endpoint
from tests.support.storage import storage_of
from wolfie.cli import app

pytestmark = [pytest.mark.s3, pytest.mark.slow]
MEMORIES = (
    ("Chased an entry after missing the breakout", "Bought late at the top; stopped out"),
    ("Earnings tomorrow and holding full size", "Halved the position before the release"),
    ("Lost two trades in a row", "Stopped trading for the day"),
)
QUERIES = ("missed the breakout", "earnings tomorrow", "losing streak")


@dataclass
class Setup:
    s3: S3Endpoint
    proxy: FaultyHttpProxy
    root: str
    episodes: list[str]

    def options(self, **extra: str) -> dict[str, str]:
        """Storage options that route through the proxy."""
        return {**self.s3.storage_options, "aws_endpoint": self.proxy.url, **extra}

    def versions(self) -> dict[str, tuple[int, int]]:
        """(version, rows) per table, read straight from moto, not through the proxy."""
        with Pack.open(
            "p", self.root, read_only=True, storage_options=self.s3.storage_options
        ) as r:
            return table_versions(r)


@pytest.fixture
def setup(s3: S3Endpoint, request: pytest.FixtureRequest) -> Iterator[Setup]:
    root = s3.fresh_root("faults")
    with faulty_http_proxy(s3.endpoint) as proxy:
        with Pack.open("p", root, storage_options={**s3.storage_options}) as pack:
            for intent, response in MEMORIES:
                pack.remember(intent, response)
            episodes = [pack.recall(q).episode_id or "" for q in QUERIES]
        yield Setup(s3, proxy, root, episodes)
        # one line per test for docs/reliability.md (shown with -s)
        print(
            f"storage-faults {request.node.name}: injected {dict(proxy.injected)}, "
            f"forwarded {sum(proxy.requests.values())} requests ({proxy.writes()} writes)"
        )


def rate_all(pack: Pack, episodes: list[str], tag: str) -> int:
    applied = 0
    for i, episode in enumerate(episodes):
        applied += pack.feedback(episode, 0.5 - 0.4 * i, idempotency_key=f"{tag}-{i}").applied
    return applied


@pytest.mark.parametrize("status", [503, 500])
def test_a_few_error_answers_are_retried_by_the_client_and_the_flush_lands(setup, status):
    with Pack.open("p", setup.root, storage_options=setup.options()) as pack:
        applied = rate_all(pack, setup.episodes, "few")
        setup.proxy.fail(status, count=3, writes_only=True)
        pack.flush()
        assert setup.proxy.injected[status] == 3  # the faults were real and all answered
        assert pack.reward_log().height == applied
        assert pack.rebuild_utilities(write=False).changed == 0


def test_a_503_spell_longer_than_the_client_retries_is_retried_by_close(setup):
    """With the client's own retries off, Pack.close() retries the flush (1, 2, 4 s)."""
    options = setup.options(client_max_retries="0")
    pack = Pack.open("p", setup.root, storage_options=options)
    applied = rate_all(pack, setup.episodes, "spell")
    setup.proxy.fail(503, seconds=2.0, writes_only=True)
    started = time.monotonic()
    pack.close()
    assert time.monotonic() - started >= 1.0  # it waited out the spell
    assert setup.proxy.injected[503] >= 2
    with Pack.open("p", setup.root, storage_options=setup.s3.storage_options) as check:
        assert check.reward_log().height == applied
        assert check.rebuild_utilities(write=False).changed == 0


def test_a_503_that_does_not_end_fails_clearly_then_the_buffer_is_written(setup):
    before = setup.versions()
    pack = Pack.open("p", setup.root, storage_options=setup.options(client_max_retries="0"))
    applied = rate_all(pack, setup.episodes, "long")
    setup.proxy.fail(503, writes_only=True)
    with pytest.raises(TransientStorageError) as failed:
        pack.flush()
    message = str(failed.value)
    # keyed rewards are merged on their event id, so the key counts once across processes
    assert "Pack 'p'" in message and "step \"merge into 'reward_events'\"" in message
    assert "retry later" in message
    assert setup.versions() == before  # readers see the version from before the fault
    setup.proxy.heal()
    pack.close()  # what the failed flush had not written is still buffered
    with Pack.open("p", setup.root, storage_options=setup.s3.storage_options) as check:
        assert check.reward_log().height == applied


def test_read_only_credentials_refuse_the_write_with_the_pack_and_step_named(setup):
    before = setup.versions()
    setup.proxy.deny_writes()
    pack = Pack.open("p", setup.root, storage_options=setup.options())
    rate_all(pack, setup.episodes, "denied")
    with pytest.raises(StorageError) as denied:
        pack.flush()
    assert not is_transient(denied.value)
    message = str(denied.value)
    assert message.startswith("Storage refused Pack 'p'")
    assert "step \"merge into 'reward_events'\"" in message and "403" in message
    assert setup.proxy.injected[403] >= 1
    assert setup.versions() == before
    with pytest.raises(StorageError, match="Storage refused Pack 'p'"):
        pack.remember("A brand new situation", "A brand new answer")
    assert setup.versions() == before
    setup.proxy.heal()
    pack.close()


def test_creating_a_table_without_write_access_names_the_pack_and_step(setup):
    """Regression: PackStore.ensure_table called LanceDB's create_table outside
    storage_step, so a denied or failed create escaped as a bare Lance error that named
    neither the Pack nor the step (and was never marked transient)."""
    setup.proxy.deny_writes()
    with Pack.open("p", setup.root, storage_options=setup.options()) as pack:
        schema = pa.schema([pa.field("id", pa.string())])
        with pytest.raises(StorageError) as denied:
            storage_of(pack).ensure_table("extra", schema)
    assert "Pack 'p'" in str(denied.value) and "step \"create table 'extra'\"" in str(denied.value)
    assert setup.proxy.injected[403] >= 1


def test_recompute_utilities_flow_retries_a_503_spell_and_refuses_a_denial(setup, monkeypatch):
    with Pack.open("p", setup.root, storage_options=setup.s3.storage_options) as pack:
        rate_all(pack, setup.episodes, "flow")
        pack.flush()
        storage_of(pack).increment(
            schemas.MEMORIES, [pack.query("items")["id"][0]], "reward_count", 5
        )
    for name, value in setup.s3.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", setup.proxy.url)
    setup.proxy.deny_writes()
    before = setup.versions()
    with pytest.raises(StorageError) as denied:
        recompute_utilities("p", setup.root)
    assert setup.proxy.injected[403] == 1  # one refused PUT: neither client nor Prefect retried
    assert "Pack 'p'" in str(denied.value) and "\"merge into 'memories'\"" in str(denied.value)
    assert setup.versions() == before
    setup.proxy.fail(503, seconds=2.0, writes_only=True)
    report = recompute_utilities("p", setup.root)
    assert report.changed == 1 and setup.proxy.injected[503] >= 1
    with Pack.open("p", setup.root, storage_options=setup.s3.storage_options) as check:
        assert check.rebuild_utilities(write=False).changed == 0


def test_a_read_only_handle_sends_no_write_request(setup, monkeypatch):
    """Read-only queries work with credentials that may not write, and send no PUT, POST
    or DELETE at all: the equivalent of an s3:GetObject + s3:ListBucket policy."""
    setup.proxy.deny_writes()
    with Pack.open("p", setup.root, read_only=True, storage_options=setup.options()) as reader:
        names = ("items", "episodes", "rewards", "retrievals", "traces")
        tables = {name: reader.query(name).height for name in names}
        assert tables["items"] == len(MEMORIES) and tables["episodes"] == len(QUERIES)
        assert reader.search(QUERIES[0]).items
        first = reader.versions(schemas.MEMORIES)[0]["version"]
        assert reader.query("items", version=first).height == 0
    for name, value in setup.s3.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", setup.proxy.url)
    command = ["query", "items", "--pack", "p", "--root", setup.root, "-f", "csv"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 1 + len(MEMORIES)
    assert sum(setup.proxy.requests.values()) > 0  # the reads went through the proxy
    assert setup.proxy.writes() == 0 and not setup.proxy.injected
