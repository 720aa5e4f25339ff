"""Prefect flows: they only compose tasks from ``tasks``."""

from flows.runtime import configure_offline

configure_offline()
