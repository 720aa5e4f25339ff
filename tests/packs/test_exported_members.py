"""The public surface of ``packs`` is ``__all__``, and every name in it resolves (as
httpx's tests/test_exported_members.py holds its own). The names load lazily
(packs/lazy.py): an unknown one is an AttributeError, not an import of the engine."""

from __future__ import annotations

import pytest

import packs
import packs.ingest

PUBLIC = {
    "FeedbackResult",
    "KnowledgeChunk",
    "Outcome",
    "Pack",
    "PackSettings",
    "Rating",
    "Recall",
    "RecalledItem",
    "RememberResult",
    "Signal",
    "WolfieError",
}


def test_all_is_the_public_surface_and_every_name_resolves():
    assert set(packs.__all__) == PUBLIC
    for name in packs.__all__:
        member = getattr(packs, name)
        assert member.__name__ == name and member.__module__.startswith("packs.")
        assert name in dir(packs)
    for name in packs.ingest.__all__:
        assert getattr(packs.ingest, name).__name__ == name


def test_an_unknown_name_is_an_attribute_error():
    for module in (packs, packs.ingest):
        with pytest.raises(AttributeError, match="NoSuchThing"):
            getattr(module, "NoSuchThing")  # noqa: B009
