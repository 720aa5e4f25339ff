"""An agent's loop from the shell: ``wolfie remember``, ``recall --log``, ``feedback``,
``signal`` and ``packs``, run as subprocesses; and :mod:`wolfie.front_door`, the code
path they share with the MCP server."""

from __future__ import annotations

import json

import pytest

from packs import Pack
from packs.errors import InvalidInput, InvalidReward, UnknownEpisode, UnknownMemory
from tests.wolfie.test_cli import wolfie
from wolfie import front_door


def _json(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_remember_recall_feedback_signal_packs_from_the_shell(tmp_path):
    root = str(tmp_path / "packs")
    pack = ["--pack", "agent", "--root", root]
    made = _json(
        wolfie(
            "remember",
            "Chased a breakout [/red] after missing it",
            "Bought the high; stopped out for -1R.",
            *pack,
            "--polarity",
            "failure",
            "--metadata",
            '{"symbol": "NVDA"}',
            "--json",
        )
    )
    assert made["status"] == "created" and made["id"].startswith("m_")
    recalled = _json(wolfie("recall", "missed the breakout, chase it?", *pack, "--log", "--json"))
    assert recalled["episode_id"] and [i["id"] for i in recalled["items"]] == [made["id"]]
    assert "[/red]" in recalled["items"][0]["text"]
    episode = recalled["episode_id"]
    rated = _json(wolfie("feedback", episode, "--rating", "1", *pack, "--json"))
    assert rated["applied"] == 1 and rated["track_records"][made["id"]] > 0
    ignored = wolfie("signal", episode, "ignored", "-m", made["id"], *pack)
    assert ignored.returncode == 0, ignored.stderr
    assert "applied to 1 memory" in ignored.stdout
    listed = _json(wolfie("packs", "--root", root, "--json"))
    assert [(p["name"], p["memories"], p["episodes"]) for p in listed["packs"]] == [("agent", 1, 1)]
    assert listed["packs"][0]["reward_events"] == 2


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["feedback", "ep_nope", "--rating", "1"], "no episode 'ep_nope'"),
        (["feedback", "ep_nope", "--rating", "2"], "rating must be a finite number in [-1, 1]"),
        (["signal", "ep_nope", "loved_it"], "Unknown implicit signal 'loved_it'"),
        (["remember", "a", "b", "--polarity", "meh"], "polarity must be"),
        (["remember", "a", "b", "--metadata", "[1"], "metadata is not valid JSON"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(tmp_path, args, says):
    root = str(tmp_path / "packs")
    with Pack.open("agent", root) as pack:
        pack.remember("seed", "seed")
    done = wolfie(*args, "--pack", "agent", "--root", root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


@pytest.fixture
def pack(tmp_root):
    with Pack.open("tools", tmp_root) as handle:
        handle.remember(
            "Moved my stop away from the price", "The loss tripled.", polarity="failure"
        )
        handle.remember("Hit 1R on a long", "Moved the stop to break-even.", polarity="success")
        yield handle


def test_front_door_results_are_json_safe(pack):
    made = front_door.remember(
        pack,
        "Sized up after a loss",
        "Lost 4R.",
        outcome="-4R",
        polarity="failure",
        metadata={"setup": "revenge"},
    )
    recalled = front_door.recall(pack, "moved my stop on a long", k=2)
    assert recalled.episode_id and len(recalled.items) == 2
    rated = pack.feedback(recalled.episode_id, -1.0)
    used = pack.signal(recalled.episode_id, "acted_on", [recalled.items[0].id])
    for result in (made, recalled, rated, used, front_door.packs(str(pack.root))):
        assert json.loads(json.dumps(result.to_dict(), allow_nan=False)) == result.to_dict()
    assert set(rated.track_records) == {i.id for i in recalled.items} and rated.value == -1.0
    assert list(used.track_records) == [recalled.items[0].id] and used.value == 1.0
    search = front_door.recall(pack, "should I move my stop further away?", log=False)
    assert search.episode_id is None


def test_front_door_refuses_bad_input_before_the_pack(pack):
    recalled = front_door.recall(pack, "stop", k=1)
    with pytest.raises(InvalidReward, match=r"\[-1, 1\]"):
        pack.feedback(recalled.episode_id, float("nan"))
    with pytest.raises(InvalidReward, match="number"):
        pack.feedback(recalled.episode_id, True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="episode_id"):
        pack.feedback("  ", 1.0)
    with pytest.raises(UnknownEpisode):
        pack.feedback("ep_missing", 1.0)
    with pytest.raises(InvalidReward, match="knows"):
        pack.signal(recalled.episode_id, "exec")
    with pytest.raises(InvalidInput, match="list of memory id"):
        pack.signal(recalled.episode_id, "accepted", "m_x")  # type: ignore[arg-type]
    with pytest.raises(UnknownMemory):
        pack.signal(recalled.episode_id, "accepted", ["m_not_injected"])
    with pytest.raises(InvalidInput, match="polarity"):
        front_door.remember(pack, "a", "b", polarity="win")
    with pytest.raises(InvalidInput, match="k must be"):
        front_door.recall(pack, "stop", k=0)
    with pytest.raises(InvalidInput, match="JSON object"):
        front_door.parse_metadata("[1, 2]")


def test_signal_with_a_repeated_memory_id_rewards_it_once(pack):
    """A memory named twice in memory_ids is one memory: one reward event, one EMA step."""
    recalled = front_door.recall(pack, "stop", k=1)
    memory = recalled.items[0].id
    result = pack.signal(recalled.episode_id, "acted_on", [memory, memory])
    assert result.applied == 1
    pack.flush()
    assert pack.count("reward_events") == 1
