"""Admission control off against on, on a committed noisy stream (issue 30).

``packs/data/admission/stream.jsonl`` (provenance in its README) mixes real-looking notes with
chatter, repeats, corrections, contradictions and low-confidence guesses whose episodes
are later rewarded (+1 when the guess was right, -1 when wrong). Each seed interleaves
the threads (a fact's items keep their order) and plays them through the public API
into a fresh Pack, once with ``admission.policy`` off and once on. Then it asks the
fixed questions of ``questions.jsonl`` (``search``, k = 3) and reports:

- the store: memory rows stored, rows recallable (not superseded, not held), held;
- retrieval success: questions whose top 3 holds the current answer;
- contradictions reaching a prompt together: questions whose top 3 holds two versions
  of one fact; and how many show a stale version at all.

How to run (from the repository root)::

    python -m evals.admission [--seeds 0 1 2] [--out out/admission] [--sweep]

It writes ``admission.json`` and ``admission.md`` under ``--out``; the README's table
and ``docs/admission.md`` quote them. ``--sweep`` also runs the policy's thresholds
over a grid on seed 0.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from packs.data import bundled
from packs.errors import InvalidInput

DATA = bundled("admission")  # package data: a wheel ships it
KINDS = ("note", "chatter", "repeat", "correction", "contradiction", "guess", "outcome")
K = 3  # the Pack's default k2 (MemRL)
SWEEP = {"novelty_floor": (0.65, 0.75, 0.85), "correction_band": (0.70, 0.75, 0.80)}


@dataclass(frozen=True)
class ArmResult:
    """One seed's run with the policy off or on."""

    seed: int
    policy: str
    stored: int  # memory rows
    recallable: int  # not superseded, not held
    held: int
    refused: int
    statuses: dict[str, int]
    success: int  # questions whose top K holds the current answer
    questions: int
    contradictions: int  # questions whose top K holds two versions of one fact
    stale: int  # questions whose top K holds a version that is not the current one
    seconds: float


def load(folder: Path = DATA) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stream and the questions; a malformed line raises InvalidInput naming it."""
    stream = _lines(folder / "stream.jsonl")
    questions = _lines(folder / "questions.jsonl")
    ids = {s["id"] for s in stream}
    for where, item in enumerate(stream, start=1):
        if item.get("kind") not in KINDS or not isinstance(item.get("id"), str):
            raise InvalidInput(f"stream.jsonl:{where}: unknown kind {item.get('kind')!r}.")
        if item["kind"] == "outcome" and item.get("of") not in ids:
            raise InvalidInput(f"stream.jsonl:{where}: outcome of unknown item {item.get('of')!r}.")
    return stream, questions


def _lines(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{path.name}:{number}: not JSON ({exc.msg}).") from exc
    return rows


def interleave(stream: Sequence[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The stream in one seeded order: each thread (a fact's items, a chatter line) keeps
    its order, threads interleave at random, weighted by what each has left."""
    threads: dict[str, list[dict[str, Any]]] = {}
    for item in stream:
        threads.setdefault(item.get("fact") or item["id"], []).append(item)
    rng = random.Random(seed)
    left = {name: list(items) for name, items in threads.items()}
    order = []
    while left:
        names = sorted(left)
        name = rng.choices(names, weights=[len(left[n]) for n in names])[0]
        order.append(left[name].pop(0))
        if not left[name]:
            del left[name]
    return order


def run_arm(
    stream: Sequence[dict[str, Any]],
    questions: Sequence[dict[str, Any]],
    seed: int,
    policy: str,
    overrides: dict[str, Any] | None = None,
) -> ArmResult:
    """Play the seed's order into a fresh Pack with the policy ``off`` or ``on``."""
    from packs.pack import Pack

    settings = {"admission": {"policy": policy, **(overrides or {})}}
    statuses: dict[str, int] = {}
    episodes: dict[str, str] = {}
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as root,
        Pack.open("stream", root, settings=settings) as pack,
    ):
        for item in interleave(stream, seed):
            if item["kind"] == "outcome":
                pack.feedback(episodes[item["of"]], item["reward"])
                continue
            episode = None
            if item["kind"] == "guess":  # the agent's episode in which it formed the guess
                episode = pack.recall(item["intent"]).episode_id
                episodes[item["id"]] = episode or ""
            result = pack.remember(
                item["intent"],
                item["response"],
                confidence=item.get("confidence"),
                episode_id=episode,
            )
            statuses[result.status] = statuses.get(result.status, 0) + 1
        pack.flush()
        rows = pack.query("memories", where={"kind": "memory"}).to_dicts()
        found = _ask(pack, stream, questions)
    held = sum(r["held_at"] is not None for r in rows)
    return ArmResult(
        seed=seed,
        policy=policy,
        stored=len(rows),
        recallable=sum(r["superseded_at"] is None and r["held_at"] is None for r in rows),
        held=held,
        refused=statuses.get("refused", 0),
        statuses=dict(sorted(statuses.items())),
        questions=len(questions),
        seconds=time.perf_counter() - started,
        **found,
    )


def _ask(
    pack: Any, stream: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
) -> dict[str, int]:
    """Retrieval success, contradictions and stale versions over the questions."""
    version = {s["response"]: (s.get("fact"), s.get("version")) for s in stream if "response" in s}
    success = contradictions = stale = 0
    for q in questions:
        items = pack.search(q["question"], k=K).items
        responses = [item.response or item.text for item in items]
        if any(q["answer"].casefold() in r.casefold() for r in responses):
            success += 1
        seen = [version[r] for r in responses if r in version and version[r][0] == q["fact"]]
        if len({v for _, v in seen}) > 1:
            contradictions += 1
        if any(v != q["version"] for _, v in seen):
            stale += 1
    return {"success": success, "contradictions": contradictions, "stale": stale}


def summarise(arms: Sequence[ArmResult]) -> dict[str, dict[str, float]]:
    """Means over seeds, per policy."""
    out: dict[str, dict[str, float]] = {}
    for policy in ("off", "on"):
        mine = [a for a in arms if a.policy == policy]
        if mine:
            out[policy] = {
                key: sum(getattr(a, key) for a in mine) / len(mine)
                for key in (
                    "stored",
                    "recallable",
                    "held",
                    "refused",
                    "success",
                    "questions",
                    "contradictions",
                    "stale",
                    "seconds",
                )
            }
    if "off" in out and "on" in out:
        out["change"] = {
            "stored": out["on"]["stored"] / out["off"]["stored"] - 1.0,
            "recallable": out["on"]["recallable"] / out["off"]["recallable"] - 1.0,
            "success": out["on"]["success"] - out["off"]["success"],
            "contradictions": out["on"]["contradictions"] - out["off"]["contradictions"],
        }
    return out


def sweep(
    stream: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The policy at each grid point of :data:`SWEEP`, on seed 0."""
    rows = []
    for floor in SWEEP["novelty_floor"]:
        for band in SWEEP["correction_band"]:
            arm = run_arm(
                stream, questions, 0, "on", {"novelty_floor": floor, "correction_band": band}
            )
            rows.append({"novelty_floor": floor, "correction_band": band, **asdict(arm)})
    return rows


def render_markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        f"# Admission control off vs on ({result['stream_items']} stream items, "
        f"{result['questions']} questions, seeds {', '.join(map(str, result['seeds']))})",
        "",
        "| policy | memory rows stored | recallable | held | refused | retrieval success "
        "| contradictions in a prompt | stale version shown |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for policy in ("off", "on"):
        m = s[policy]
        lines.append(
            f"| {policy} | {m['stored']:.1f} | {m['recallable']:.1f} | {m['held']:.1f} "
            f"| {m['refused']:.1f} | {m['success']:.1f} / {m['questions']:.0f} "
            f"| {m['contradictions']:.1f} | {m['stale']:.1f} |"
        )
    c = s["change"]
    lines += [
        "",
        f"With the policy on the store is {-100 * c['stored']:.1f} % smaller "
        f"({-100 * c['recallable']:.1f} % fewer recallable rows), retrieval success "
        f"changes by {c['success']:+.1f} questions and contradictions in a prompt by "
        f"{c['contradictions']:+.1f} (means over seeds).",
        "",
        "| seed | policy | stored | recallable | held | success | contradictions | stale "
        "| statuses |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in result["arms"]:
        shown = ", ".join(f"{k} {v}" for k, v in a["statuses"].items())
        lines.append(
            f"| {a['seed']} | {a['policy']} | {a['stored']} | {a['recallable']} | {a['held']} "
            f"| {a['success']} | {a['contradictions']} | {a['stale']} | {shown} |"
        )
    if result.get("sweep"):
        lines += ["", "## Thresholds (seed 0, policy on)", ""]
        lines += [
            "| novelty_floor | correction_band | stored | success | contradictions |",
            "|---|---|---|---|---|",
        ]
        for r in result["sweep"]:
            lines.append(
                f"| {r['novelty_floor']} | {r['correction_band']} | {r['stored']} "
                f"| {r['success']} | {r['contradictions']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.admission", description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("out/admission"))
    parser.add_argument("--sweep", action="store_true", help="Also sweep the thresholds.")
    args = parser.parse_args(argv)

    stream, questions = load(args.data)
    arms = [
        run_arm(stream, questions, seed, policy) for seed in args.seeds for policy in ("off", "on")
    ]
    result: dict[str, Any] = {
        "stream_items": len(stream),
        "questions": len(questions),
        "seeds": args.seeds,
        "summary": summarise(arms),
        "arms": [asdict(a) for a in arms],
    }
    if args.sweep:
        result["sweep"] = sweep(stream, questions)
    report = render_markdown(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "admission.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "admission.md").write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
