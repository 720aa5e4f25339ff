"""The per-run summary of an ingestion: one row per item, and the failures spelled out. Pure.

``rtf`` is the real-time factor: seconds of processing per second of audio (lower is
better; 0.2 means five times faster than real time). ``wall_s`` sums the seconds the
item's steps ran, so concurrent items don't inflate each other's figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

STEPS = ("download", "transcribe", "chunk", "upsert")


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one source: each finished step's result, or the first failure."""

    source: str
    steps: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    failed_step: str | None = None
    error: str | None = None  # "ErrorClass: message"

    @property
    def ok(self) -> bool:
        return self.error is None and all(step in self.steps for step in STEPS)


def status_of(outcome: ItemOutcome) -> str:
    if not outcome.ok:
        return "failed"
    reused = [bool(outcome.steps[s].get("reused")) for s in STEPS]
    if all(reused):
        return "up to date"
    return "resumed" if any(reused[:2]) else "ingested"


def summary_row(outcome: ItemOutcome) -> dict[str, Any]:
    """media, duration, chunks, wall time, real-time factor, status and error of one item."""
    fetched = dict(outcome.steps.get("download", {}).get("info", {}))
    transcript = dict(outcome.steps.get("transcribe", {}).get("info", {}))
    upserted = dict(outcome.steps.get("upsert", {}).get("info", {}))
    wall = sum(float(step.get("seconds", 0.0)) for step in outcome.steps.values())
    duration = transcript.get("duration_s")
    return {
        "media": fetched.get("title") or outcome.source,
        "source": outcome.source,
        "media_id": fetched.get("media_id"),
        "duration_s": duration,
        "chunks": upserted.get("chunks"),
        "written": upserted.get("written"),
        "wall_s": round(wall, 2),
        "rtf": round(wall / duration, 3) if duration else None,
        "resumed_parts": transcript.get("resumed_parts"),
        "reused_steps": [s for s in STEPS if outcome.steps.get(s, {}).get("reused")],
        "status": status_of(outcome),
        "worker": outcome.steps.get("transcribe", outcome.steps.get("download", {})).get("worker"),
        "error": f"{outcome.failed_step}: {outcome.error}" if outcome.error else None,
    }


def failure_message(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line per failed item, for the run's final error and the CLI."""
    failed = [row for row in rows if row["status"] == "failed"]
    lines = [f"{len(failed)} of {len(rows)} items failed:"]
    lines += [f"- {row['source']}: {row['error']}" for row in failed]
    return "\n".join(lines)


def totals(rows: Sequence[Mapping[str, Any]], wall_s: float) -> dict[str, Any]:
    """Run-level figures: items, failures, audio seconds, chunks, run wall time."""
    audio = sum(float(row["duration_s"] or 0.0) for row in rows)
    return {
        "items": len(rows),
        "failed": sum(row["status"] == "failed" for row in rows),
        "audio_s": round(audio, 2),
        "chunks": sum(int(row["chunks"] or 0) for row in rows),
        "wall_s": round(wall_s, 2),
        "rtf": round(wall_s / audio, 3) if audio else None,
    }
