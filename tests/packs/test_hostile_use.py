"""Hostile use of the front door (issue 12, section 6): non-finite values, durable mode on
a read-only filesystem, hooks named by stored settings, deleted Packs, duplicate item
ids, odd roots, colliding metadata filters, secrets in reprs and unbounded key sets.

Each test names the bug it pins. Most use a small hash embedder (a Pack of its own
8-d space) so that they run in milliseconds; the real model adds nothing here.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import packs.embeddings.base as embeddings_base
import packs.embeddings.pack_embedder as pack_embedder
from packs import KnowledgeChunk, Pack, WolfieError
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, Vectors
from packs.errors import (
    InvalidEmbedding,
    InvalidInput,
    InvalidSettings,
    MetadataTooLarge,
    PackNotFound,
    StorageError,
    UnwritableRows,
    is_transient,
)
from packs.hooks import register_hook, registered_hooks, unregister_hook
from packs.store import schemas as S
from packs.store.faults import storage_step
from packs.store.filters import tag
from packs.store.locations import PackLocation, locate
from tests.support.internals import services_of
from tests.support.packs import HashEmbedder, stored_rows
from tests.support.storage import storage_of

ALPHA = 0.3
# Every hit counts and nothing merges: the hash embedder's cosines mean nothing here.
OPEN = {"delta": -1.0, "k1": 10, "k2": 3, "dedup_threshold": 1.0}


class PoisonEmbedder(EmbeddingProvider):
    """Deterministic 32-d vectors seeded by the text, except that any text containing
    'poison' embeds to NaN. (32-d, not 8: Lance stores an 8-d NaN vector silently, and
    refuses wider ones, like the model's 384-d.)"""

    info = EmbeddingInfo("poison", "seeded", "test:poison", 32)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).random(self.info.dim) + 0.1
            rows.append(np.full_like(vector, np.nan) if "poison" in text else vector)
        matrix = np.array(rows)
        return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def hashed(tmp_path: Path) -> Iterator[Pack]:
    with Pack.open("hostile", tmp_path, embedder=PoisonEmbedder(), settings=OPEN) as pack:
        pack.remember("Chased a breakout", "Stopped out at -1R")
        pack.remember("Waited for the retest", "Entered at the level, +2R")
        yield pack


def stored(pack: Pack, table: str) -> list[dict]:
    pack.flush()
    return stored_rows(pack, table)


# --- non-finite values -----------------------------------------------------------------


def test_a_nan_embedding_is_refused_before_anything_is_buffered(hashed):
    """Bug: one NaN query vector was buffered with its episode, every later flush failed
    on it, and every row acknowledged after it was never written."""
    with pytest.raises(InvalidEmbedding, match="non-finite"):
        hashed.recall("poison query")
    assert services_of(hashed).flusher.idle()
    with pytest.raises(InvalidEmbedding):
        hashed.remember("a poison intent", "a response")
    with pytest.raises(InvalidEmbedding):
        hashed.add_knowledge([KnowledgeChunk("poison chunk", "doc.md", 0)])
    for i in range(20):
        hashed.feedback(hashed.recall(f"breakout {i}").episode_id, 1.0)
    assert len(stored(hashed, S.EPISODES)) == 20
    assert len(stored(hashed, S.REWARD_EVENTS)) == 40
    assert hashed.count(kind="knowledge") == 0


def test_every_provider_refuses_non_finite_vectors():
    """Bug: providers (ONNX, sentence-transformers, HTTP) passed NaN rows through."""
    with pytest.raises(InvalidEmbedding, match="non-finite"):
        PoisonEmbedder().embed(["fine", "poison"])


@pytest.mark.parametrize(
    "times",
    [
        {"start_s": math.nan},
        {"end_s": math.inf},
        {"start_s": -math.inf},
        {"start_s": "3"},
        {"start_s": True},
        {"start_s": -1.0},
    ],
)
def test_non_finite_chunk_times_are_refused(hashed, times):
    """Bug: a NaN or infinite start_s/end_s was stored as a chunk's time."""
    with pytest.raises(InvalidInput, match=r"start_s|end_s"):
        hashed.add_knowledge([KnowledgeChunk("A chunk", "talk.mp3", 0, **times)])
    assert hashed.count(kind="knowledge") == 0


def test_a_row_that_cannot_be_written_never_blocks_the_rest(hashed, monkeypatch, caplog):
    """Bug: a row the table refuses (here a NaN vector that slipped past the checks) was
    put back ahead of every newer row, so each later flush failed on it again."""
    for module in (pack_embedder, embeddings_base):
        monkeypatch.setattr(module, "check_vectors", lambda vectors, *args: vectors)
    bad = hashed.recall("poison query").episode_id
    good = [hashed.recall(f"breakout {i}").episode_id for i in range(9)]
    for episode in good:
        hashed.feedback(episode, 0.5)
    with caplog.at_level(logging.ERROR), pytest.raises(UnwritableRows, match=bad):
        hashed.flush()
    assert bad in caplog.text
    episodes = {row["id"] for row in stored(hashed, S.EPISODES)}
    assert episodes == set(good)
    assert len(stored(hashed, S.REWARD_EVENTS)) == 18
    hashed.feedback(hashed.recall("breakout again").episode_id, 1.0)
    hashed.flush()  # nothing of the bad row is left to fail again
    assert len(stored(hashed, S.EPISODES)) == 10


def test_a_fault_that_is_not_about_the_rows_drops_nothing(hashed, monkeypatch):
    """Only Arrow's refusals count as bad rows: an unclassified Lance error (a vanished
    data file) keeps every row buffered for the next flush."""
    store, real_append = storage_of(hashed), storage_of(hashed).append
    failures = {S.EPISODES: 1}

    def failing_append(name, data):
        if failures.get(name):
            failures[name] -= 1
            raise RuntimeError("lance error: Not found: episodes.lance/data/x.lance")
        real_append(name, data)

    monkeypatch.setattr(store, "append", failing_append)
    episode = hashed.recall("breakout").episode_id  # one row: it can't be told apart
    with pytest.raises(RuntimeError, match="Not found"):
        hashed.flush()
    hashed.flush()
    assert [row["id"] for row in stored(hashed, S.EPISODES)] == [episode]


# --- durable mode on a read-only filesystem --------------------------------------------


@contextmanager
def read_only_mount(folder: Path) -> Iterator[None]:
    """``folder`` bind-mounted read-only over itself (root can't write there either)."""
    try:
        subprocess.run(["mount", "--bind", folder, folder], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"can't bind-mount here: {exc}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", folder], check=True, capture_output=True)
        yield
    finally:
        subprocess.run(["umount", folder], check=True)


def test_durable_mode_raises_when_the_commit_failed(tmp_path):
    """Bug: with log_flush_rows=1 on a read-only filesystem, feedback returned a result
    as if stored: the 'Read-only file system' error was taken for a transient one, the
    flush was deferred and the acknowledged reward never written."""
    pack = Pack.open("durable", tmp_path, embedder=HashEmbedder(), settings={"log_flush_rows": 1})
    pack.remember("Chased a breakout", "Stopped out at -1R")
    episode = pack.recall("breakout").episode_id
    pack.flush()
    with read_only_mount(tmp_path):
        with pytest.raises(StorageError, match="durable") as raised:
            pack.feedback(episode, 1.0, idempotency_key="k1")
        assert not is_transient(raised.value)
        with pytest.raises(StorageError):  # the retry can't claim it was stored either
            pack.feedback(episode, 1.0, idempotency_key="k1")
        with pytest.raises(StorageError):
            pack.recall("breakout")
    pack.close()  # writable again: what the calls buffered is written once
    reopened = Pack.open("durable", tmp_path, embedder=HashEmbedder())
    assert len(stored(reopened, S.REWARD_EVENTS)) == 1


def test_durable_mode_writes_every_call_at_once(tmp_path):
    """Bug: in durable mode resolve() without a reward, and a validation whose hook
    failed, returned with their rows only buffered (no flush was due on their path)."""
    settings = {**OPEN, "log_flush_rows": 1}
    with Pack.open("durable", tmp_path, embedder=HashEmbedder(), settings=settings) as pack:
        pack.remember("Chased a breakout", "Stopped out at -1R")
        episode = pack.recall("breakout").episode_id
        assert services_of(pack).flusher.idle()
        pack.resolve(episode, "Waited for the retest")
        assert services_of(pack).flusher.idle()
        assert pack.validate(episode, "output", hook=lambda out, ctx: "no bool").passed is None
        assert services_of(pack).flusher.idle()


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.EROFS, "Read-only file system"),
        OSError(errno.EACCES, "Permission denied"),
        OSError(errno.EPERM, "Operation not permitted"),
        OSError("LanceError(IO): Read-only file system (os error 30), object_store.rs:1000"),
        OSError("LanceError(IO): Permission denied (os error 13), local.rs:12"),
        RuntimeError("lance error: LanceError(IO): Operation not permitted (os error 1)"),
    ],
)
def test_read_only_and_permission_errors_are_permanent(exc):
    """Bug: 'LanceError(IO): Read-only file system' was classified transient."""
    location = locate("p", "/tmp")
    with pytest.raises(StorageError) as raised, storage_step(location, "append"):
        raise exc
    assert not is_transient(raised.value)


# --- hooks -----------------------------------------------------------------------------


def always_true(output: str, context: dict) -> bool:
    return True


def test_stored_settings_can_not_name_code_to_run(hashed, tmp_path):
    """Bug: configure(rewards={'validation_hook': 'builtins:exec'}) made validate() run
    the output as Python: whoever could write the Pack's storage ran code in every app
    that validated."""
    marker = tmp_path / "pwned"
    hashed.configure(rewards={"validation_hook": "builtins:exec"})
    episode = hashed.recall("breakout").episode_id
    with pytest.raises(InvalidSettings, match="registered") as raised:
        hashed.validate(episode, f"open({str(marker)!r}, 'w').write('x')")
    assert not marker.exists()
    assert "register_hook" in str(raised.value) and "import path" in str(raised.value)


def test_hooks_come_from_the_applications_registry(hashed):
    register_hook("test-always-true", always_true)
    try:
        assert "test-always-true" in registered_hooks()
        hashed.configure(rewards={"validation_hook": "test-always-true"})
        episode = hashed.recall("breakout").episode_id
        assert hashed.validate(episode, "fine").passed is True
        assert stored(hashed, S.VALIDATIONS)[0]["hook"] == "test-always-true"
    finally:
        unregister_hook("test-always-true")
    with pytest.raises(InvalidSettings, match="test-always-true"):
        hashed.validate(episode, "fine")


def test_hooks_from_entry_points(hashed, tmp_path, monkeypatch):
    """An installed distribution names its hooks in the ``wolfie.validation_hooks``
    entry-point group; the Pack stores the name only."""
    dist = tmp_path / "site" / "wolfie_test_hooks-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: wolfie-test-hooks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[wolfie.validation_hooks]\nep-true = tests.packs.test_hostile_use:always_true\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert "ep-true" in registered_hooks()
    hashed.configure(rewards={"validation_hook": "ep-true"})
    episode = hashed.recall("breakout").episode_id
    assert hashed.validate(episode, "fine").passed is True


# --- deleted Packs ---------------------------------------------------------------------


EXITING_APP = """
import shutil, sys
from packs import Pack
from tests.support.packs import HashEmbedder

root, settings = sys.argv[1], {settings!r}
pack = Pack.open("doomed", root, embedder=HashEmbedder(), settings=settings)
pack.remember("Chased a breakout", "Stopped out at -1R")
pack.feedback(pack.recall("breakout").episode_id, 1.0)
pack.flush()  # a long-running app: every table handle is open
pack.feedback(pack.recall("breakout").episode_id, 1.0)
shutil.rmtree(root + "/doomed")
"""  # and the script ends with the Pack open: the interpreter's exit flushes it


def test_the_exit_flush_never_recreates_a_deleted_pack(tmp_path):
    """Bug: a Pack whose folder was deleted while rows were buffered was half recreated
    by the at-exit flush (log tables without pack_meta): a broken Pack."""
    script = EXITING_APP.format(settings=OPEN)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "doomed").exists()
    assert "doomed" in done.stderr and "deleted" in done.stderr
    with pytest.raises(PackNotFound):
        Pack.open("doomed", tmp_path, create=False)


def test_flushing_a_deleted_pack_raises_and_drops(tmp_path):
    pack = Pack.open("doomed", tmp_path, embedder=HashEmbedder(), settings=OPEN)
    pack.remember("Chased a breakout", "Stopped out at -1R")
    pack.recall("breakout")
    pack.flush()
    pack.recall("breakout")
    shutil.rmtree(tmp_path / "doomed")
    with pytest.raises(PackNotFound, match="deleted"):
        pack.flush()
    assert not (tmp_path / "doomed").exists()
    pack.close()  # nothing left to write


# --- duplicate item ids ----------------------------------------------------------------


def test_duplicate_memory_ids_are_credited_once(hashed):
    """Bug: signal(..., memory_ids=[m] * 5) moved m five times and reported 1."""
    recall = hashed.recall("breakout", k=1)
    (memory,) = recall.ids
    result = hashed.signal(recall.episode_id, "accepted", memory_ids=[memory] * 5)
    assert result.applied == 1
    assert result.track_records[memory] == pytest.approx(ALPHA * 0.5 * 0.6)  # implicit weighs 0.5
    assert hashed.get(memory)["utility"] == pytest.approx(ALPHA * 0.5 * 0.6)
    assert len(stored(hashed, S.REWARD_EVENTS)) == 1
    assert hashed.rebuild_utilities(write=False).changed == 0


# --- roots -----------------------------------------------------------------------------


def test_a_file_uri_root_is_the_local_folder(tmp_path, monkeypatch):
    """Bug: root='file:///x' made a folder named 'file:' under the working directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "root").mkdir()
    with Pack.open("p", (tmp_path / "root").as_uri(), embedder=HashEmbedder()) as pack:
        assert pack.root == str(tmp_path / "root")
    assert (tmp_path / "root" / "p").is_dir()
    assert not (tmp_path / "file:").exists()
    with pytest.raises(InvalidInput, match="file://"):
        locate("p", "file://otherhost/x")


def test_an_empty_root_is_refused(tmp_path, monkeypatch):
    """Bug: root='' silently meant the working directory."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput, match="root"):
        Pack.open("p", "", embedder=HashEmbedder())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["file", "devnull", "read-only"])
def test_an_unusable_root_raises_a_wolfie_error(tmp_path, kind):
    """Bug: a root that is a file, /dev/null or on a read-only filesystem escaped as a
    bare OSError (NotADirectoryError, 'Read-only file system')."""
    if kind == "file":
        root = tmp_path / "a-file"
        root.write_text("not a folder")
    elif kind == "devnull":
        root = Path("/dev/null")
    else:
        root = tmp_path / "ro"
        root.mkdir()
    if kind == "read-only":
        with read_only_mount(root), pytest.raises(StorageError, match=r"(?i)read-only"):
            Pack.open("p", root, embedder=HashEmbedder())
    else:
        with pytest.raises(WolfieError, match="not a folder"):
            Pack.open("p", root, embedder=HashEmbedder())


# --- metadata filters ------------------------------------------------------------------


def test_metadata_filters_can_not_collide(hashed):
    """Bug: tags were 'key=value', so {'a': 'b=c'} and {'a=b': 'c'} were one tag, and an
    empty string and None were both 'key='."""
    one = hashed.remember("first", "r1", metadata={"a": "b=c"}).id
    two = hashed.remember("second", "r2", metadata={"a=b": "c"}).id
    empty = hashed.remember("third", "r3", metadata={"x": ""}).id
    null = hashed.remember("fourth", "r4", metadata={"x": None}).id
    hashed.remember("fifth", "r5")

    def hits(metadata: dict) -> set[str]:
        return set(hashed.search("anything", k=10, metadata=metadata).ids)

    assert hits({"a": "b=c"}) == {one}
    assert hits({"a=b": "c"}) == {two}
    assert hits({"x": ""}) == {empty}
    assert hits({"x": None}) == {null}
    assert hits({"x": ["", None]}) == {empty, null}


scalars = st.one_of(st.none(), st.text(max_size=8), st.integers(), st.booleans())


@given(st.text(min_size=1, max_size=8), scalars, st.text(min_size=1, max_size=8), scalars)
def test_tags_are_injective(k1, v1, k2, v2):
    """Distinct (key, value-as-text) pairs never share a tag; None is its own value."""

    def text(v):
        return None if v is None else str(v)

    if (k1, text(v1)) != (k2, text(v2)):
        assert tag(k1, v1) != tag(k2, v2)
    assert "=" in tag(k1, v1)  # packs/store/scopes.py relies on it


def test_legacy_tags_still_match():
    """Tags written before the escaping (no '=' or backslash in the key) are unchanged."""
    assert tag("symbol", "NVDA") == "symbol=NVDA"
    assert tag("n", 3) == "n=3"
    assert tag("empty", "") == "empty="


@pytest.mark.parametrize(
    "metadata",
    [{f"k{i}": i for i in range(1_000)}, {"k" * 10_000: 1}, {"k": "v" * 100_000}],
    ids=["many-keys", "long-key", "long-value"],
)
def test_metadata_size_is_bounded(hashed, metadata):
    """Bug: metadata of any size was stored and indexed as tags."""
    with pytest.raises(MetadataTooLarge):
        hashed.remember("intent", "response", metadata=metadata)
    with pytest.raises(MetadataTooLarge):
        hashed.add_knowledge([KnowledgeChunk("text", "doc.md", 0, metadata=metadata)])


# --- secrets ---------------------------------------------------------------------------

SECRETS = {
    "aws_secret_access_key": "s3cr3t-value-1",
    "aws_session_token": "t0ken-value-2",
    "azure_storage_account_key": "k3y-value-3",
    "google_service_account_key": "k3y-value-4",
    "proxy_password": "passw0rd-value-5",
    "aws_access_key_id": "AKIA-value-6",
}


def test_secret_storage_options_are_redacted():
    """Bug: only three AWS option names were redacted; a session token under another
    provider's name, a password or an account key showed in the repr."""
    location = PackLocation(
        "p", "s3://bucket", {**SECRETS, "aws_endpoint": "http://127.0.0.1:9000"}
    )
    for text in (repr(location), str(location)):
        assert not any(secret in text for secret in SECRETS.values()), text
        assert "http://127.0.0.1:9000" in text


def test_storage_errors_never_quote_secret_options():
    location = PackLocation("p", "s3://bucket", dict(SECRETS))
    with pytest.raises(StorageError) as raised, storage_step(location, "append"):
        raise OSError(f"403 Forbidden for token={SECRETS['aws_session_token']}")
    assert SECRETS["aws_session_token"] not in str(raised.value)


def test_a_password_in_the_root_url_is_redacted():
    location = PackLocation("p", "s3://user:hunter2-pw@host/bucket", {})
    assert "hunter2-pw" not in repr(location)
    with pytest.raises(StorageError) as raised, storage_step(location, "append"):
        raise OSError("403 Forbidden")
    assert "hunter2-pw" not in str(raised.value)


# --- memory growth ---------------------------------------------------------------------


def test_the_seen_idempotency_keys_are_bounded(hashed):
    """Bug: every feedback call added its key to an in-memory set that never shrank
    (50,000 entries after 50,000 calls). Evicted keys are still found in the log."""
    keys = services_of(hashed).rewards.keys
    keys.bound = 50
    episode = hashed.recall("breakout").episode_id
    for i in range(200):
        hashed.feedback(episode, 0.1, idempotency_key=f"key-{i}")
        assert len(keys) <= 50
    assert hashed.feedback(episode, 0.1, idempotency_key="key-0").duplicate  # stored
    hashed.feedback(episode, 0.1, idempotency_key="late")
    for i in range(60):
        hashed.feedback(episode, 0.1, idempotency_key=f"more-{i}")
    assert hashed.feedback(episode, 0.1, idempotency_key="late").duplicate
    assert len(stored(hashed, S.REWARD_EVENTS)) == 2 * 261


def test_the_key_bound_is_documented():
    from packs.rewards.idempotency import SEEN_KEYS_BOUND

    assert 1_000 <= SEEN_KEYS_BOUND <= 100_000
    text = " ".join(Path("docs/durability.md").read_text().split())
    assert f"{SEEN_KEYS_BOUND:,} most recent idempotency keys" in text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
