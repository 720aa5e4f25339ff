"""Pack settings: defaults from MemRL, validation, unknown keys rejected."""

import pytest

from packs.errors import InvalidSettings
from packs.settings import PackSettings


def test_memrl_defaults():
    s = PackSettings()
    assert (s.rewards.alpha, s.ranking.lam, s.ranking.k1, s.ranking.k2) == (0.3, 0.5, 10, 3)


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


# What a Pack stored before the settings were grouped (the previous PackSettings.to_dict()
# with alpha 0.4, context_theta 0.7, log_flush_rows 1, lexical rrf, outcome_scale 2).
STORED_FLAT = (
    '{"alpha": 0.4, "lam": 0.5, "k1": 10, "k2": 3, "delta": 0.25, "w_confidence": 0.1, '
    '"explore_bonus": 0.1, "dedup_threshold": 0.89, "z_floor_similarity": 0.02, '
    '"z_floor_utility": 0.3, "z_floor_confidence": 0.1, "z_clip": 3.0, '
    '"failure_utility": -0.3, "max_text_chars": 20000, "log_flush_rows": 1, '
    '"log_flush_seconds": 5.0, "compact_every_commits": 64, "version_retention_hours": 24.0, '
    '"utility_mode": "contextual", "context_theta": 0.7, "context_kappa": 0.2, '
    '"context_history": 16, "context_prior": "never-helped", "context_kernel": "hinge", '
    '"context_links": 3, "link_margin": 0.15, "lexical": "rrf", "rrf_k": 60, '
    '"lexical_weight": 0.4, "thompson_scale": 0.0, "explore_seed": 0, "blame_relief": 0.0, '
    '"spread": 0.0, "spread_decay": 0.5, "spread_hops": 1, "inhibition": 0.0, "rewards": '
    '{"enabled": ["explicit", "outcome", "vote", "implicit", "validation", "intrinsic"], '
    '"weights": {"explicit": 1.0, "outcome": 1.0, "vote": 1.0, "implicit": 0.5, '
    '"validation": 1.0, "intrinsic": 1.0}, "outcome_scale": 2.0, "vocabulary": '
    '{"acted_on": 1.0, "accepted": 0.6, "edited": 0.2, "ignored": -0.3}, "vote_reward": 1.0, '
    '"validation_hook": null, "validation_timeout_s": 5.0, "validation_pass": 0.25, '
    '"validation_fail": -1.0, "confidence_rate": 0.1, "intrinsic_weight": 0.2, '
    '"intrinsic_min_neighbours": 3, "intrinsic_neighbour_similarity": 0.5, '
    '"success_threshold": 0.5, "failure_threshold": -0.3}}'
)


def test_settings_stored_before_the_groups_read_back_the_same():
    import json

    s = PackSettings.from_dict(json.loads(STORED_FLAT))
    assert (s.rewards.alpha, s.context.theta, s.flush.rows, s.ranking.lexical) == (
        0.4,
        0.7,
        1,
        "rrf",
    )
    assert s.rewards.outcome_scale == 2.0 and s.ranking.k2 == 3
    assert PackSettings.from_dict(s.to_dict()) == s  # and round-trip in the grouped form


def test_every_spelling_of_a_setting_names_the_same_value():
    """A flat name (as stored before the groups), a dotted name and a group dict."""
    flat = PackSettings().replace(context_theta=0.7, log_flush_rows=8)
    dotted = PackSettings().replace(**{"context.theta": 0.7, "flush.rows": 8})
    grouped = PackSettings().replace(context={"theta": 0.7}, flush={"rows": 8})
    assert flat == dotted == grouped
    assert grouped.context.kappa == PackSettings().context.kappa  # a group dict is partial


def test_strategies_are_classes_named_in_storage():
    from packs.learning.strategies import CalibratedKernel, NegativePrior

    s = PackSettings().replace(context={"prior": "negative", "kernel": "calibrated"})
    assert isinstance(s.context.prior, NegativePrior)
    assert isinstance(s.context.kernel, CalibratedKernel)
    assert s.to_dict()["context"]["prior"] == "negative"
    assert PackSettings(context={"prior": NegativePrior()}) == s.replace(context_kernel="hinge")


def test_a_refusal_names_the_group_and_setting():
    with pytest.raises(InvalidSettings, match=r"ranking\.k1: Input should be a valid integer"):
        PackSettings().replace(k1=True)
    with pytest.raises(InvalidSettings, match=r"ranking: k2=11 must not exceed k1=10"):
        PackSettings().replace(k2=11)
