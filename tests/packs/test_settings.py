"""Pack settings: defaults from MemRL, validation, unknown keys rejected."""

import pytest

from packs.errors import InvalidSettings
from packs.settings import PackSettings


def test_memrl_defaults():
    s = PackSettings()
    assert (s.alpha, s.lam, s.k1, s.k2) == (0.3, 0.5, 10, 3)


def test_round_trip_and_replace():
    s = PackSettings().replace(alpha=0.5, k2=1)
    assert PackSettings.from_dict(s.to_dict()) == s


@pytest.mark.parametrize(
    "changes",
    [
        {"alpha": 0.0},
        {"alpha": 1.5},
        {"alpha": float("nan")},
        {"lam": -0.1},
        {"k1": 0},
        {"k2": 11},
        {"k1": True},
        {"dedup_threshold": 1.2},
        {"z_floor_utility": 0.0},
        {"alpha": "0.3"},
    ],
)
def test_bad_values_are_refused(changes):
    with pytest.raises(InvalidSettings):
        PackSettings().replace(**changes)


def test_unknown_key_is_refused_with_the_known_ones_listed():
    with pytest.raises(InvalidSettings, match="Unknown Pack setting"):
        PackSettings.from_dict({"alpah": 0.3})
