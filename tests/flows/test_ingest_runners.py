"""The media flow on other runners: a local 2-worker Dask cluster, and `wolfie ingest`."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.ingest import with_dask
from packs import Pack
from tests.support.media import Clips, make_clips, serve, to_mp3
from tests.support.storage import storage_of
from wolfie.cli import app

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Clips:
    return make_clips(tmp_path_factory.mktemp("runner-media"))


@pytest.fixture(scope="module")
def server(media: Clips):
    with serve(media.folder) as url:
        yield url


def test_items_spread_over_a_local_two_worker_dask_cluster(
    media: Clips, server: str, tmp_root: Path, monkeypatch: pytest.MonkeyPatch
):
    import prefect.settings

    # Workers are new processes (spawned, never forked): point them at the test server.
    monkeypatch.setenv("PREFECT_API_URL", prefect.settings.PREFECT_API_URL.value())
    hello_mp3 = to_mp3(media.hello, media.folder / "hello.mp3")
    sources = [f"{server}/hello.wav", f"{server}/{hello_mp3.path.name}"]
    result = with_dask(workers=2)(sources=sources, pack="dask", root=str(tmp_root))
    assert [row["status"] for row in result.items] == ["ingested", "ingested"]
    here = f"{socket.gethostname()}:{os.getpid()}"
    workers = {row["worker"] for row in result.items}
    assert here not in workers  # the steps ran in the cluster's worker processes
    with Pack.open("dask", tmp_root, read_only=True) as pack:
        assert pack.count(kind="knowledge") == sum(row["chunks"] for row in result.items)


def test_wolfie_ingest_shows_progress_and_a_summary(media: Clips, server: str, tmp_path: Path):
    guide = tmp_path / "guide.md"
    guide.write_text("# Shift guide\n\n## Keys\n\nForklift keys are in the cabinet.\n")
    root = tmp_path / "packs"
    args = [
        "ingest",
        str(media.hello.path),
        f"{server}/missing.mp3",
        str(guide),
        "--pack",
        "cli",
        "--root",
        str(root),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output  # one item failed: bad input exits 2
    output = " ".join(result.output.split())
    assert "Documents into Pack 'cli'" in output and "guide.md" in output
    assert "1 of 2 ingested" in output and "ingested" in output
    assert "SourceNotFound" in output and "missing.mp3" in output
    with Pack.open("cli", root, read_only=True) as pack:
        titles = {r["title"] for r in storage_of(pack).scan("memories", ["title"]).to_pylist()}
    assert {"hello", "Shift guide > Keys"} <= titles
