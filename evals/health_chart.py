"""Render a Pack's maturity traces as a PNG chart, embeddable in a Prefect artifact."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: render to memory
import matplotlib.pyplot as plt

SIGNALS = ("hit_rate", "coverage", "feedback_density", "q_variance_ratio")


def health_chart_png(traces: Sequence[dict[str, Any]]) -> bytes:
    """Episode count and the four rate-like signals over time, as PNG bytes."""
    times = [t["at"] for t in traces]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    top.plot(times, [t["episode_count"] for t in traces], marker="o", color="black")
    top.set_ylabel("episodes")
    top.set_title("Pack maturity over time")
    for signal in SIGNALS:
        values = [t.get(signal) for t in traces]
        bottom.plot(times, [float("nan") if v is None else v for v in values], marker=".",
                    label=signal)  # fmt: skip
    bottom.set_ylabel("signal")
    if len(times) == 1:  # one point: keep the axis to a day, not matplotlib's +-2 years
        bottom.set_xlim(times[0] - timedelta(hours=12), times[0] + timedelta(hours=12))
    bottom.legend(loc="upper left", fontsize="small")
    figure.autofmt_xdate()
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()


def markdown_image(png: bytes, alt: str) -> str:
    """Markdown that shows ``png`` inline (a data URI: the UI needs no file server)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"
