"""Package attributes that load on first use (PEP 562), so importing a light submodule
(``packs.errors``, ``packs.ingest.documents``) does not pay for LanceDB or the media stack.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``homes`` is imported
    from its module when first read, then kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__


class LazyModule:
    """A module imported on first attribute access (``pl.DataFrame``), not at import:
    the engine's heavy libraries that a recall never needs (polars: the log's replay,
    rebuilds, queries, maturity) stay off ``from packs import Pack`` (issue 45). The
    import itself is :func:`importlib.import_module`'s, under Python's per-module import
    lock, so two threads touching it first at once import it once."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """``name``, imported when first used (:class:`LazyModule`). Typed where it is bound:
    ``if TYPE_CHECKING: import polars as pl`` / ``else: pl = lazy_module("polars")``."""
    return LazyModule(name)
