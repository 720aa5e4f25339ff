"""Data the installed package reads at run time, shipped inside it (package data).

- ``models/all-MiniLM-L6-v2/``: the default embedder's tokenizer (``packs/embeddings``);
- ``demo/``: the demo bundle (``wolfie demo``, ``flows/demo.py``);
- ``media/``: the demo's voice note;
- ``lessons/``, ``admission/``, ``corrections/``, ``dedup/``: the labelled sets that
  ``wolfie lessons score`` and ``python -m evals.admission`` / ``evals.corrections`` /
  ``evals.dedup`` read by default (each folder's README gives its provenance).

Read through :func:`bundled`, never from a path beside a checkout: a built wheel holds
these files under ``site-packages/packs/data/`` (``tests/packaging/test_wheel.py``
installs one away from the checkout). The learning benchmark's corpora (``data/evals``,
3 MB, which ``wolfie learn-bench --corpus`` names) stay in the repository.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def bundled(*parts: str) -> Path:
    """The path of a shipped file or folder, e.g. ``bundled("demo", "episodes.jsonl")``.

    pip installs a wheel as plain files, so the resource is a real path (a zipped
    install, which pip never makes, is refused with a clear error)."""
    resource = files(__name__).joinpath(*parts)
    path = Path(str(resource))
    if not path.exists():
        raise FileNotFoundError(
            f"Wolfie's bundled file {'/'.join(parts)!r} is missing from {path.parent}: "
            "reinstall the package (pip install --force-reinstall wolfie)."
        )
    return path
