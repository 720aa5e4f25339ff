"""One real ``prefect server`` for every test in tests/deployments that needs one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.prefect_server import PrefectServer, prefect_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    home = tmp_path_factory.mktemp("prefect-home")
    with prefect_server(home) as running:
        yield running
