"""Admission control settings (issue 30): what ``remember`` stores, holds on probation or
refuses, when the Pack's policy is on. Sources of every default: ``docs/settings.md``
and ``docs/admission.md`` (measured on ``packs/data/admission/``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from packs.settings.base import Group

AdmissionPolicy = Literal["off", "on"]


class AdmissionSettings(Group):
    """The policy and its factors: content, novelty, predicted utility, confidence."""

    _where: ClassVar[str] = "admission"

    policy: AdmissionPolicy = "off"
    # refuse: fewer content words than this in the intent and response together
    min_content_words: int = Field(3, ge=0, le=1_000)
    # refuse as redundant: a current memory of an intent at least this close already
    # says the same fact (below dedup_threshold, where it would have merged)
    novelty_floor: float = Field(0.75, ge=0.0, le=1.0)
    # supersede a reworded correction: intent at least this close, responses about the
    # same thing (response cosine >= correction_subject) with a new value or negation
    correction_band: float = Field(0.70, ge=0.0, le=1.0)
    correction_subject: float = Field(0.6, ge=-1.0, le=1.0)
    # hold: the caller's confidence below this
    hold_confidence: float = Field(0.5, ge=0.0, le=1.0)
    # hold: the similarity-weighted track record of the nearest rewarded memories below this
    hold_utility: float = Field(-0.3, ge=-1.0, le=1.0)
    utility_neighbours: int = Field(5, ge=1, le=100)
    utility_min_evidence: int = Field(2, ge=1, le=100)
