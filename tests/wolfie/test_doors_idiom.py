"""Issue 43: the REST and MCP doors in their libraries' idiom. The REST server loads no
MCP module (the parameter table is the doors' own, :mod:`wolfie.params`)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.api_server import REPO, api_env


def test_the_rest_server_loads_no_mcp_module():
    code = (
        "import sys, wolfie.api.serve, wolfie.api.schema; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp' "
        "or m.startswith('wolfie.mcp')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=api_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
