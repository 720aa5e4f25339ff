"""``import lancedb`` without its start-up cost until a Pack is opened, and without its
REST namespace client's ever.

**lancedb itself** (issue 45): its import (the native library, ``lance_namespace`` and
its generated pydantic models, ``pyarrow.dataset``) was most of ``from packs import
Pack``: 3.2 s against 0.40 s for ``import numpy, pyarrow, pydantic``. So no module
imports lancedb at its top: ``PackStore`` imports it when it first connects
(``tables.py``), and the index configurations are made inside functions
(``maintenance.py``, ``fulltext.py``); ``tests/wolfie/test_import_budget.py`` keeps
it so.

**Its REST client**: LanceDB 0.40 (and 0.41, the newest, with lance-namespace 0.13, the
newest: checked in December 2026, neither imports it lazily) imports ``lance_namespace``,
which imports the package ``lance_namespace_urllib3_client``, whose ``__init__`` imports
every generated REST API module; each decorates its methods with pydantic's
``validate_call``, which builds a validator per method at import. That was 2.7 s of a
4.2 s ``import lancedb`` on the shared 2-core box (``python -X importtime``), paid by
every ``wolfie`` command that opens a Pack (issue 24), for a client that only LanceDB's
REST namespaces use, never a folder or ``s3://`` Pack.

:func:`defer_namespace_client` registers that package unexecuted (its submodules still
import as usual: ``lance_namespace`` needs only ``.models``); the first attribute read
from the package itself runs its real ``__init__``, so a program that does use the REST
client gets the whole package, only later.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

CLIENT = "lance_namespace_urllib3_client"
_lock = threading.Lock()


def defer_namespace_client() -> None:
    """Register :data:`CLIENT` so its ``__init__`` runs on first use (a no-op when it is
    imported already or not installed)."""
    if CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(CLIENT)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def load(name: str) -> Any:
        with _lock:
            if module.__dict__.get("__getattr__") is load:
                del module.__dict__["__getattr__"]
                loader.exec_module(module)
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {CLIENT!r} has no attribute {name!r}") from None

    module.__dict__["__getattr__"] = load
    sys.modules[CLIENT] = module
