"""``import lancedb`` through ``packs.store`` skips the REST namespace client's API
modules (issue 24: 2.7 s of a 4.2 s import), and the client still loads whole on use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROGRAM = """
import sys
import packs.store.gateway  # imports lancedb
print("api" if "lance_namespace_urllib3_client.api" in sys.modules else "no api")
import lance_namespace_urllib3_client as client
print(client.ApiClient.__name__, "lance_namespace_urllib3_client.api" in sys.modules)
"""


def test_lancedb_imports_without_the_rest_client_which_still_loads_on_use():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["no api", "ApiClient True"]
