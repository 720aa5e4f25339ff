"""A Pack's health run: record the maturity signals, read back every trace."""

from __future__ import annotations

from dataclasses import dataclass, fields

from packs.maturity import Maturity
from packs.pack import Pack


@dataclass(frozen=True)
class HealthReport:
    current: Maturity
    traces: tuple[Maturity, ...]  # every recorded trace, oldest first


def record_health(pack: Pack) -> HealthReport:
    """Append the current maturity signals to ``state_traces``; return them and every
    trace recorded so far."""
    current = pack.maturity(record=True)
    columns = [f.name for f in fields(Maturity)]
    rows = pack.query("traces", columns=columns).to_dicts()  # flushed first
    traces = sorted((Maturity(**row) for row in rows), key=lambda t: t.at)
    return HealthReport(current, tuple(traces))
