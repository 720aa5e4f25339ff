"""Retry only what may pass: the one retry policy of Wolfie's tasks.

Every task that touches storage retries transient faults (:class:`packs.errors.
TransientError`) with :data:`TRANSIENT`, and nothing else. The ingest flow may override
the counts per run (``with_options``); the condition stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packs.errors import is_transient


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """True when the task failed with a :class:`packs.errors.TransientError`."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - inspecting the failure, not handling it
        return is_transient(exc)
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """How often, and how far apart, a task retries a transient fault."""

    retries: int = 3
    # Backoff (hand-set): a brief object-store outage (503 spell) lasts seconds.
    delays_s: tuple[float, ...] = (2.0, 10.0, 30.0)

    def task_options(self) -> dict[str, Any]:
        """Keyword arguments for ``@task`` / ``Task.with_options``."""
        delays: float | list[float] = (
            self.delays_s[0] if len(self.delays_s) == 1 else list(self.delays_s)
        )
        return {
            "retries": self.retries,
            "retry_delay_seconds": delays,
            "retry_condition_fn": retry_transient,
        }


TRANSIENT = RetryPolicy()
