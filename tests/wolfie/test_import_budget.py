"""Issue 45: the import budget of a recall. ``from packs import Pack`` took 3.2 s against
0.40 s for ``import numpy, pyarrow, pydantic`` (8x), most of it lancedb (and its REST
namespace client) and bm25s with scipy; a cold ``wolfie recall`` paid for them all.
Now ``from packs import Pack`` loads none of them, and a recall, in Python or through the
CLI, loads none of the heavy stacks it never uses: Prefect, ragas, whisper, LangChain,
LlamaIndex, and lancedb's REST client (packs/store/quick_import.py). Each check is a
fresh process reading its own ``sys.modules``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Never on a recall's path: the batch system, the evals, media, the frameworks' retrievers
# and lancedb's generated REST client (its api modules; .models is what lance_namespace
# needs).
NEVER = (
    "prefect",
    "prefect_dask",
    "dask",
    "ragas",
    "faster_whisper",
    "whisper",
    "ctranslate2",
    "yt_dlp",
    "langchain",
    "langchain_core",
    "langchain_community",
    "llama_index",
    "matplotlib",
    "lance_namespace_urllib3_client.api",
    "lance_namespace_urllib3_client.api_client",
)
# What `from packs import Pack` leaves for the first Pack.open or recall.
NOT_ON_IMPORT = ("lancedb", "lance_namespace", "bm25s", "scipy", "onnxruntime", "polars", *NEVER)
REPORT = (
    "import atexit, sys\n"
    "_watched = sys.argv.pop().split(',')\n"
    "atexit.register(lambda: print('LOADED', *sorted(m for m in _watched if m in sys.modules),"
    " file=sys.stderr))\n"
)


def run(code: str, watched: tuple[str, ...], *args: str) -> list[str]:
    """Run ``code`` in a fresh Python; the watched modules it had loaded at exit."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT + code, *args, ",".join(watched)],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("LOADED")]
    return line.split()[1:]


def test_from_packs_import_pack_loads_no_storage_or_search_library():
    assert run("from packs import Pack", NOT_ON_IMPORT) == []


def test_a_recall_in_python_loads_no_heavy_stack(tmp_path):
    code = (
        "from packs import Pack\n"
        f"with Pack.open('budget', {str(tmp_path)!r}) as pack:\n"
        "    pack.remember('Chased a breakout I missed', 'Bought the high, -1R')\n"
        "    assert pack.recall('missed the breakout').items\n"
    )
    assert run(code, NEVER) == []


def test_a_cold_wolfie_recall_loads_no_heavy_stack(tmp_path):
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "wolfie.cli",
            "remember",
            "Chased a breakout",
            "Bought it",
            "--pack",
            "budget",
            "--root",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    cli = "sys.argv = ['wolfie', *sys.argv[1:]]\nfrom wolfie.cli import main\nmain()\n"
    args = ("recall", "missed the breakout", "--pack", "budget", "--root", str(tmp_path))
    assert run(cli, NEVER, *args, "--json") == []
