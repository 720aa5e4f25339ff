"""The maturity chart is readable from the first health run on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from evals.health_chart import SIGNALS, health_chart_png, health_figure

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TRACE = {
    "at": AT,
    "episode_count": 24,
    "stage": "warming",
    "hit_rate": 0.8,
    "coverage": 0.5,
    "feedback_density": None,
    "q_variance_ratio": 2.4,
}


def test_a_single_run_shows_every_signal_value():
    """Bug: after one pack-health run the chart was empty axes: a line needs two points,
    the '.' markers were specks, and an undefined signal showed nothing at all."""
    figure = health_figure([TRACE])
    (axis,) = figure.axes
    heights = [bar.get_height() for bar in axis.patches]
    assert heights == pytest.approx([0.8, 0.5, 0.0, 2.4])
    labels = [t.get_text() for t in axis.get_xticklabels()]
    assert labels == list(SIGNALS)
    notes = [t.get_text() for t in axis.texts]
    assert notes == ["0.80", "0.50", "no data yet", "2.40"]
    assert "stage warming" in axis.get_title() and "24 episode(s)" in axis.get_title()


def test_several_runs_draw_marked_lines():
    later = {**TRACE, "at": AT + timedelta(hours=1), "episode_count": 30}
    top, bottom = health_figure([TRACE, later]).axes
    assert [line.get_marker() for line in top.lines + bottom.lines] == ["o"] * 5
    legend = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert "feedback_density (no data yet)" in legend
    assert health_chart_png([TRACE, later]).startswith(b"\x89PNG")
