"""The optional parts of the install, and the one message for a missing one.

``pip install wolfie`` is the engine, the CLI and the MCP server. The batch system
(Prefect flows and deployments, Dask), media ingestion (faster-whisper, yt-dlp), the
evals (ragas, the plots) and the LangChain and LlamaIndex retrievers are extras
(``pyproject.toml``); the two README commands install them all (``.[all]``).
"""

from __future__ import annotations

import importlib.util

from packs.errors import MissingExtra

# extra -> the top-level modules it brings (import names, not distribution names)
EXTRAS: dict[str, tuple[str, ...]] = {
    "batch": ("prefect", "prefect_dask", "boto3"),
    "media": ("faster_whisper", "yt_dlp"),
    "evals": ("ragas", "langchain_community", "rapidfuzz", "jiwer", "matplotlib"),
    # The retrievers of wolfie.integrations: each module names its extra when imported
    # without it.
    "langchain": ("langchain_core",),
    "llama-index": ("llama_index",),
}


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name), or None for any other module."""
    top = (module or "").partition(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def missing_extra(error: ModuleNotFoundError, what: str) -> MissingExtra | None:
    """The clear error for ``error`` when an extra would have brought the module."""
    extra = extra_for(error.name)
    if extra is None:
        return None
    return MissingExtra(
        f"{what} needs the {extra!r} extra ({error.name} is not installed): "
        f"pip install 'wolfie[{extra}]' (or 'wolfie[all]')."
    )


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported (nothing is imported)."""
    return all(importlib.util.find_spec(module) is not None for module in EXTRAS[extra])


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` can be imported."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            error = ModuleNotFoundError(f"No module named {module!r}", name=module)
            raise missing_extra(error, what) or MissingExtra(what)
