"""Flows run on the real Prefect engine, against one temporary server per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def prefect_harness() -> Iterator[None]:
    from flows.runtime import configure_offline

    configure_offline()
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
