"""Issue 32: ``wolfie demo`` from the wheel with the ``batch`` extra, in its own venv.

Bug: the demo bundle and its voice note were read from ``data/`` beside the checkout, so
no installed package could run the README's main job; and with ``batch`` but not
``media`` the demo died on the voice note (``No module named 'av'``). It now ships the
bundle, and skips the voice note, saying which extra transcribes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.wheel import install

pytestmark = pytest.mark.slow


def test_wolfie_demo_runs_from_the_wheel_with_the_batch_extra(wheel: Path, tmp_path: Path):
    venv = install(wheel, tmp_path / "venv", "batch")
    done = venv.run("wolfie", "demo", "--epochs", "2", timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    text = " ".join(done.stdout.split())
    assert "Loaded 16 knowledge chunks and 10 memories" in text
    assert len(re.findall(r"\b\d+%", text)) >= 2  # one success rate per epoch
    assert "needs the 'media' extra (pip install 'wolfie[media]')" in text
    assert (venv.home / ".wolfie" / "demo").is_dir()
