"""Debian's Chromium as the tests drive it (docs/field-notes.md): where it is, and the
flags that keep it quiet on a closed network and let it run headless as root."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
# Without the background-networking flags Chromium floods the closed network.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
