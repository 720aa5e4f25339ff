"""One memory's lesson written outside the batch refresh, with its provenance (issue 30):
what a writer sees, the lesson_log row, ``get``'s ``lesson_provenance`` and ``history``'s
"lesson" versions."""

from __future__ import annotations

import pytest

from packs import Pack
from packs.lessons.writers import lesson_prompt


def test_a_lesson_is_stored_with_its_writer_model_prompt_and_episode(pack: Pack) -> None:
    memory = pack.remember("Nightly export timed out", "Split the export by day").id
    episode = pack.recall("the nightly export times out").episode_id or ""
    pack.feedback(episode, 1.0)
    pack.feedback(pack.recall("nightly export timeout").episode_id or "", -0.5)
    [evidence] = pack.lessons.evidence([memory, "m_unknown", memory])
    assert evidence.recent_rewards == (1.0, -0.5) and evidence.reward_count == 2
    assert evidence.previous_lesson is None
    assert "Situation: Nightly export timed out" in lesson_prompt(evidence)
    pack.lessons.save(
        evidence, "Split big exports.", writer="mcp-sampling", model="m-1", episode_id=episode
    )
    [again] = pack.lessons.evidence([memory])
    pack.lessons.save(
        again, "Split exports by day.", writer="template", model=None, episode_id=None
    )
    row = pack.get(memory)
    assert row["experience_summary"] == "Split exports by day."
    assert row["lesson_provenance"]["writer"] == "template"
    lessons = [v for v in pack.history(memory) if v.event == "lesson"]
    assert [(v.source, v.changes["lesson"].old, v.changes["lesson"].new) for v in lessons] == [
        ("mcp-sampling", None, "Split big exports."),
        ("template", "Split big exports.", "Split exports by day."),
    ]
    assert lessons[0].provenance == {
        "model": "m-1",
        "prompt_version": "lesson-v1",
        "episode_id": episode,
    }
    assert [v.version for v in pack.history(memory)] == [1, 2, 3]


def test_the_prompt_takes_a_memory_text_as_data(pack: Pack) -> None:
    """Braces in a memory are text, not template fields (str.format reads the template's
    fields only)."""
    memory = pack.remember("Saw {intent} and {0} in a log", "Escaped the {braces}").id
    [evidence] = pack.lessons.evidence([memory])
    prompt = lesson_prompt(evidence)
    assert "Situation: Saw {intent} and {0} in a log" in prompt
    with pytest.raises(KeyError):
        lesson_prompt(evidence, "{unknown_field}")
