"""Render a Pack's maturity traces as a PNG chart, embeddable in a Prefect artifact."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: render to memory
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

SIGNALS = ("hit_rate", "coverage", "feedback_density", "q_variance_ratio")


def health_chart_png(traces: Sequence[dict[str, Any]]) -> bytes:
    """Episode count and the four rate-like signals over time, as PNG bytes."""
    return _png(health_figure(traces))


def health_figure(traces: Sequence[dict[str, Any]]) -> Figure:
    """The chart of :func:`health_chart_png`. With a single trace a line has nothing to
    join, so it is a bar per signal with its value written on it ("no data yet" where
    the signal is still undefined)."""
    if len(traces) == 1:
        return _single_trace_figure(traces[0])
    times = [t["at"] for t in traces]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    top.plot(times, [t["episode_count"] for t in traces], marker="o", color="black")
    top.set_ylabel("episodes")
    top.set_title("Pack maturity over time")
    for signal in SIGNALS:
        values = [t.get(signal) for t in traces]
        label = signal if any(v is not None for v in values) else f"{signal} (no data yet)"
        bottom.plot(
            times,
            [float("nan") if v is None else v for v in values],
            marker="o",
            markersize=4,
            label=label,
        )
    bottom.set_ylabel("signal")
    bottom.legend(loc="upper left", fontsize="small")
    figure.autofmt_xdate()
    return figure


def _single_trace_figure(trace: dict[str, Any]) -> Figure:
    figure, axis = plt.subplots(figsize=(8, 4))
    values = [trace.get(signal) for signal in SIGNALS]
    bars = axis.bar(SIGNALS, [0.0 if v is None else float(v) for v in values], color="tab:blue")
    for bar, value in zip(bars, values, strict=True):
        text = "no data yet" if value is None else f"{value:.2f}"
        where = (bar.get_x() + bar.get_width() / 2, bar.get_height())
        axis.annotate(
            text, where, ha="center", va="bottom", xytext=(0, 3), textcoords="offset points"
        )
    top = max([1.0, *(float(v) for v in values if v is not None)])
    axis.set_ylim(0, top * 1.15)
    axis.set_ylabel("signal")
    axis.set_title(
        f"Pack maturity at {trace['at']:%Y-%m-%d %H:%M} UTC: stage {trace.get('stage', '?')}, "
        f"{trace['episode_count']} episode(s) (one run so far)"
    )
    return figure


def _png(figure: Figure) -> bytes:
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()


def markdown_image(png: bytes, alt: str) -> str:
    """Markdown that shows ``png`` inline (a data URI: the UI needs no file server)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"
