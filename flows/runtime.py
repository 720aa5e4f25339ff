"""Process-level settings for running Wolfie's flows offline.

Prefect reads its settings from the environment when it starts its (ephemeral) server,
so these defaults are applied before Prefect is imported by ``flows`` and ``tasks``.
They only fill in what the operator has not set.
"""

from __future__ import annotations

import os

OFFLINE_DEFAULTS = {
    # docs/field-notes.md: with telemetry on, the ephemeral server logged "database is locked".
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "HF_HUB_OFFLINE": "1",
    # docs/field-notes.md measured 20-26 s for the first start on 2 cores; Prefect's default
    # timeout of 20 s fails on a busy machine.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
}


def configure_offline() -> None:
    for key, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(key, value)
