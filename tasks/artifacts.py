"""Helpers of the publish tasks: artifact keys and Markdown table cells."""

from __future__ import annotations

import re

KEY_LENGTH = 100  # Prefect's limit on an artifact key


def artifact_key(*parts: str) -> str:
    """The Prefect artifact key of ``parts`` joined by dashes: lowercase letters, digits
    and single dashes only (what Prefect accepts), at most 100 characters."""
    key = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return key[:KEY_LENGTH].rstrip("-")


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")
