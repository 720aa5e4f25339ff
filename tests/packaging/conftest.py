"""One wheel per session, and one venv holding it (core install plus the ``langchain``
extra), shared by the packaging tests: building and installing cost about 35 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.wheel import WheelVenv, build_wheel, install


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def wheel_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> WheelVenv:
    """The wheel in a fresh venv, with no extra but ``langchain``: no Prefect in it."""
    return install(wheel, tmp_path_factory.mktemp("installed") / "venv", "langchain")
