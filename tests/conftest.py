"""Session-wide test setup: offline settings, then fixtures for storage roots.

Sections: environment (set before anything imports ragas or Prefect), storage roots
(a local folder per test, one moto S3 server per session). Further harnesses (Prefect's
``prefect_test_harness``) belong here as their own session fixtures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

# --- environment: no telemetry from the libraries under test --------------------------------
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

import pytest

if TYPE_CHECKING:
    from tests.support.s3 import S3Endpoint

# --- storage roots ---------------------------------------------------------------------------


@pytest.fixture
def tmp_root(tmp_path: Path) -> Path:
    """A fresh local Pack root (a folder under pytest's tmp_path)."""
    root = tmp_path / "packs"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Endpoint]:
    """One moto S3 server for the session. Use ``s3.fresh_root()`` per test for isolation."""
    from tests.support.s3 import moto_s3  # imported here: moto and boto3 take about 1 s

    with moto_s3() as endpoint:
        yield endpoint
