"""Retry only what may pass: Prefect's ``retry_condition_fn`` for Wolfie tasks."""

from __future__ import annotations

from typing import Any

from packs.errors import is_transient


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """True when the task failed with a :class:`packs.errors.TransientError`."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - inspecting the failure, not handling it
        return is_transient(exc)
    return False
