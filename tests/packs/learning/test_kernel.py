"""The transfer kernel calibrated on a Pack's own rewards (packs/learning/kernel.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packs.learning.context import ContextIndex
from packs.learning.kernel import BINS, calibrate, hinge, prior_kernel
from packs.settings import ContextSettings

DIM = 8


def pair(cos: float) -> np.ndarray:
    """Two unit vectors at cosine ``cos``."""
    a = np.zeros(DIM, dtype=np.float32)
    a[0] = 1.0
    b = np.zeros(DIM, dtype=np.float32)
    b[0], b[1] = cos, np.sqrt(1.0 - cos**2)
    return np.stack([a, b])


def test_without_evidence_the_kernel_is_the_hinge():
    kernel = calibrate([], theta=0.8, prior_pairs=20.0)
    assert kernel.pairs == 0
    np.testing.assert_allclose(kernel.positive, prior_kernel(0.8).positive)
    assert kernel.weights(np.array([1.0, 0.9, 0.5]), np.array([1.0, 1.0, -1.0])) == pytest.approx(
        [1.0, hinge(np.array([0.925]), 0.8)[0], 0.0]
    )


def test_rewards_that_agree_at_a_cosine_transfer_there_and_disagreeing_ones_do_not():
    agree = [(pair(0.7), np.array([1.0, 1.0])) for _ in range(200)]
    base = [(pair(0.2), np.array([-1.0, -1.0])) for _ in range(200)]  # failures are common
    kernel = calibrate(agree + base, theta=0.8, prior_pairs=20.0)
    assert kernel.weights(np.array([0.7]), np.array([1.0]))[0] > 0.5  # hinge gave 0
    disagree = [(pair(0.7), np.array([1.0, -1.0])) for _ in range(200)]
    kernel = calibrate(disagree + base, theta=0.8, prior_pairs=20.0)
    assert kernel.weights(np.array([0.7]), np.array([1.0]))[0] == pytest.approx(0.0)


def test_thin_evidence_stays_near_the_prior():
    kernel = calibrate([(pair(0.7), np.array([1.0, 1.0]))], theta=0.8, prior_pairs=20.0)
    assert kernel.weights(np.array([0.7]), np.array([1.0]))[0] < 0.1


@given(
    st.lists(
        st.tuples(st.floats(-1, 1), st.sampled_from([-1.0, 1.0]), st.sampled_from([-1.0, 1.0])),
        min_size=1,
        max_size=60,
    )
)
def test_the_kernel_is_monotone_and_bounded(rows):
    kernel = calibrate(
        [(pair(c), np.array([a, b])) for c, a, b in rows], theta=0.8, prior_pairs=20.0
    )
    for side in (kernel.positive, kernel.negative):
        assert side.shape == (BINS,)
        assert np.all(np.diff(side) >= -1e-12)
        assert np.all((side >= 0) & (side <= 1))


def test_calibrated_mode_without_evidence_ranks_as_the_hinge():
    """kappa is rescaled by 1 - theta, so a Pack with no transfer evidence ranks as before."""
    index = ContextIndex(DIM, ContextSettings())
    calibrated = ContextIndex(DIM, ContextSettings(kernel="calibrated"))
    query = pair(1.0)[0]
    index.add("m", query, 1.0)
    calibrated.add("m", query, 1.0)
    hinge_u = index.utility("m", query, 0.0)
    calibrated_u = calibrated.utility("m", query, 0.0)
    assert calibrated_u == pytest.approx(hinge_u)


def test_kernel_and_link_settings_are_validated(tmp_root):
    from packs import Pack
    from packs.errors import InvalidSettings

    with Pack.open("settings", str(tmp_root)) as pack:
        with pytest.raises(InvalidSettings, match=r"context\.kernel"):
            pack.configure(context_kernel="gaussian")
        with pytest.raises(InvalidSettings, match=r"context\.links"):
            pack.configure(context_links=-1)
        with pytest.raises(InvalidSettings, match=r"context\.link_margin"):
            pack.configure(link_margin=float("nan"))
        assert pack.configure(context_kernel="calibrated", context_links=5).context.links == 5
