"""Debian's Chromium for the browser tests (docs/field-notes.md): headless as root with
these flags; without the background-networking ones it floods the closed network with
refused connections. No test tool may download a browser of its own."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
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
