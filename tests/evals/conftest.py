"""Fixtures of the eval tests: a real slice of the committed man-page eval data."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.eval_data import write_slice


@pytest.fixture(scope="session")
def rm_mv_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mv and rm: 37 chunks, 8 queries (2 held out)."""
    return write_slice(tmp_path_factory.mktemp("slice"), {"mv", "rm"})
