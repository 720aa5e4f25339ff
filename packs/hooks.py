"""Validation hooks, from a registry the application controls.

A Pack's settings store only a hook's *name* (``settings.rewards.validation_hook``).
The name is looked up here, among hooks the application registered in code::

    from packs.hooks import register_hook

    @register_hook("no-empty-answer")
    def no_empty_answer(output: str, context: dict) -> bool:
        return bool(output.strip())

or that an installed distribution declares in the ``wolfie.validation_hooks``
entry-point group (``[project.entry-points."wolfie.validation_hooks"]`` in its
``pyproject.toml``). Settings are data read from storage, and whoever can write a Pack's
storage can write them: a stored name can only pick among the hooks this process was
given, never import or run other code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, overload

from packs.errors import InvalidSettings

ENTRY_POINT_GROUP = "wolfie.validation_hooks"
Hook = Callable[[str, dict[str, Any]], Any]

_registry: dict[str, Hook] = {}
_lock = threading.Lock()


@overload
def register_hook(name: str, hook: Hook) -> Hook: ...
@overload
def register_hook(name: str, hook: None = None) -> Callable[[Hook], Hook]: ...


def register_hook(name: str, hook: Hook | None = None) -> Hook | Callable[[Hook], Hook]:
    """Register ``hook(output, context) -> bool`` under ``name`` (also a decorator).

    Registering another function under a taken name is refused; registering the same
    one again is a no-op (a module imported twice).
    """
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidSettings(f"A hook name must be a non-empty str of <= 200 chars: {name!r}.")

    def add(function: Hook) -> Hook:
        if not callable(function):
            raise InvalidSettings(f"Validation hook {name!r} is not callable.")
        with _lock:
            taken = _registry.get(name)
            if taken is not None and taken is not function:
                raise InvalidSettings(
                    f"A validation hook named {name!r} is already registered; "
                    "unregister_hook() it first or pick another name."
                )
            _registry[name] = function
        return function

    return add if hook is None else add(hook)


def unregister_hook(name: str) -> None:
    """Forget a hook registered in code (entry points stay installed)."""
    with _lock:
        _registry.pop(name, None)


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def registered_hooks() -> list[str]:
    """Names of every hook this process may run: registered in code or as entry points."""
    with _lock:
        names = set(_registry)
    return sorted(names | set(_entry_points()))


def get_hook(name: str) -> Hook:
    """The hook registered as ``name``; :class:`InvalidSettings` naming the known ones.

    Code registrations win over entry points of the same name.
    """
    with _lock:
        hook = _registry.get(name)
    if hook is not None:
        return hook
    point = _entry_points().get(name)
    if point is None:
        known = registered_hooks()
        legacy = (
            " It looks like an import path: Packs once stored those, and they are no longer "
            "imported; register the function under this exact name to keep it."
            if ":" in name
            else ""
        )
        raise InvalidSettings(
            f"No validation hook is registered as {name!r} (registered: {known or 'none'}). "
            "Register one with packs.hooks.register_hook(name, function) or the "
            f"{ENTRY_POINT_GROUP!r} entry-point group; settings name a hook, they can't "
            f"import code.{legacy}"
        )
    try:
        function = point.load()
    except (ImportError, AttributeError) as exc:
        raise InvalidSettings(
            f"Validation hook {name!r} (entry point {point.value!r}) can't be loaded: {exc}"
        ) from exc
    if not callable(function):
        raise InvalidSettings(f"Validation hook {name!r} ({point.value!r}) is not callable.")
    return function
