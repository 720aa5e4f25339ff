"""End-to-end checks of the Pack API, shared by ``scripts/check_engine.py`` and the tests.

Each check takes a :class:`PackTarget` (a root plus how to reach it), works on a fresh
Pack of its own with the real default embedder, raises :class:`CheckFailed` when the
engine misbehaves and returns a one-line summary when it doesn't. The expected numbers
are worked out by hand from the MemRL update ``Q <- Q + alpha (r - Q)`` with alpha=0.3.
"""

from __future__ import annotations

import contextlib
import math
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from packs import KnowledgeChunk, Pack, Recall
from packs.errors import PackNotFound, ReadOnlyPack
from packs.store import schemas as S
from tests.support.packs import stored_rows

ALPHA = 0.3  # PackSettings.alpha default (MemRL)
Q_AFTER_WIN = 0.0 + ALPHA * (1.0 - 0.0)  # 0.3
Q_AFTER_WIN_LOSS = Q_AFTER_WIN + ALPHA * (-1.0 - Q_AFTER_WIN)  # -0.09
Q_AFTER_WIN_LOSS_WIN = Q_AFTER_WIN_LOSS + ALPHA * (1.0 - Q_AFTER_WIN_LOSS)  # 0.237


class CheckFailed(AssertionError):
    """The engine did not do what a check expected; the message says what differed."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_close(actual: float, expected: float, what: str) -> None:
    expect(
        math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12),
        f"{what}: expected {expected!r}, got {actual!r}",
    )


def logged(recall: Recall) -> str:
    """The episode id of a ``recall()``, which must have logged one."""
    if recall.episode_id is None:
        raise CheckFailed(f"recall({recall.query!r}) returned no episode_id")
    return recall.episode_id


@dataclass(frozen=True)
class PackTarget:
    """Where the checks open their Packs, and how they reach that storage.

    ``storage_options`` are passed to :meth:`Pack.open`; ``env`` is set in ``os.environ``
    only while a Pack is opened, so the env-var route must capture its settings at open.
    """

    label: str
    root: str
    storage_options: Mapping[str, str] | None = None
    env: Mapping[str, str] | None = None

    def open(self, name: str, *, read_only: bool = False, create: bool = True) -> Pack:
        options = dict(self.storage_options) if self.storage_options else None
        with _environ(self.env):
            return Pack.open(name, self.root, read_only, create=create, storage_options=options)

    def new_name(self, check: str) -> str:
        return f"{check}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def _environ(values: Mapping[str, str] | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values or {}}
    os.environ.update(values or {})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- fixtures: texts with known relations under all-MiniLM-L6-v2 -------------------------

PASSWORD = ("How do I reset my account password?", "Use the 'Forgot password' link.")
PASSWORD_PARAPHRASE = "How can I reset the password of my account?"  # cosine ~0.99
UNRELATED = ("What is the capital of France?", "Paris.")  # cosine ~0.09 to PASSWORD

DOCS = [
    KnowledgeChunk(
        "To rotate an API key, open Settings > Security and click 'Rotate key'; the old "
        "key stops working after 24 hours.",
        "docs/security.md",
        0,
        title="Rotating keys",
    ),  # cosine ~0.89 to DOCS_QUERY
    KnowledgeChunk(
        "An API key is shown only once, when it is created; keep it in a secret manager.",
        "docs/security.md",
        1,
        title="New keys",
    ),  # ~0.59
    KnowledgeChunk(
        "Each user may hold at most five active API keys.",
        "docs/security.md",
        2,
        title="Key limits",
    ),  # ~0.41
    KnowledgeChunk(
        "Invoices are generated on the third business day of each month.",
        "docs/billing.md",
        0,
        title="Invoices",
    ),  # ~0.09, below the similarity floor delta=0.25
    KnowledgeChunk(
        "Users reset a forgotten password from the login page.",
        "docs/accounts.md",
        0,
        title="Passwords",
    ),
    KnowledgeChunk(
        "The nightly batch recalculates mark-to-market values for all open positions.",
        "docs/batch.md",
        0,
        title="Nightly batch",
    ),
]
DOCS_QUERY = "How do I rotate my API key?"
DOCS_EXPECTED_ORDER = [0, 1, 2]  # indices in DOCS of the chunks above delta, best first

LOSS_MEMORIES = [
    ("Chased an entry right after a losing trade", "Bought again at once; lost another 1R"),
    ("Doubled the size to win back a loss", "Blew through the daily loss limit"),
    ("Revenge traded after being stopped out", "Took three impulsive trades, all losers"),
    ("Took a break after two losses in a row", "Came back calm and followed the plan"),
]
LOSS_QUERY = "What should I do after a losing trade?"
OFF_TOPIC_MEMORY = ("Which coffee beans make a good espresso?", "A dark roast, ground fine.")

PLAYBOOK = [
    KnowledgeChunk(f"{text}", f"playbook/{i}.md", 0)
    for i, text in enumerate(
        [
            "After a losing trade, step away from the screen before the next entry.",
            "After a loss, write the trade up in the journal before trading again.",
            "Stop trading for the day once the daily loss limit is hit.",
            "Check the economic calendar before the market opens.",
        ]
    )
]
PLAYBOOK_QUERY = "What should I do after a losing trade?"
TRAINING_ROUNDS = 3  # utilities reach +-(1 - 0.7**3) = +-0.657


# --- the checks ------------------------------------------------------------------------


def check_dedup(target: PackTarget) -> str:
    """(a) A close paraphrase merges into the stored memory; an unrelated intent adds a row."""
    with target.open(target.new_name("dedup")) as pack:
        first = pack.remember(*PASSWORD)
        expect(not first.merged, f"the first memory should be new, got {first}")
        merged = pack.remember(PASSWORD_PARAPHRASE, "Click 'Forgot password' on the login page.")
        expect(merged.merged, f"a close paraphrase should merge, got {merged}")
        expect(merged.id == first.id, f"merged into {merged.id}, expected {first.id}")
        expect(pack.count(S.MEMORIES, kind=S.KIND_MEMORY) == 1, "a merge must not add a row")
        row = pack.get(first.id)
        expect(row["merge_count"] == 1, f"merge_count should be 1, got {row['merge_count']}")
        intents = [p["intent_text"] for p in row["provenance"] or []]
        expect(
            intents == [PASSWORD[0], PASSWORD_PARAPHRASE],
            f"provenance should hold both intents in order, got {intents}",
        )
        other = pack.remember(*UNRELATED)
        expect(not other.merged, f"an unrelated intent must not merge, got {other}")
        count = pack.count(S.MEMORIES, kind=S.KIND_MEMORY)
        expect(count == 2, f"an unrelated intent should add a row: {count} memories")
    return f"paraphrase merged at cosine {merged.similarity:.3f}; unrelated intent added"


def check_recall_order(target: PackTarget) -> str:
    """(b) The most relevant knowledge chunk ranks first, in recall and in search."""
    with target.open(target.new_name("order")) as pack:
        ids = pack.add_knowledge(DOCS)
        expect(len(ids) == len(DOCS), f"add_knowledge returned {len(ids)} ids for {len(DOCS)}")
        recall = pack.recall(DOCS_QUERY)
        expected = [ids[i] for i in DOCS_EXPECTED_ORDER]
        expect(
            recall.ids == expected,
            f"expected {[DOCS[i].title for i in DOCS_EXPECTED_ORDER]}, got "
            f"{[item.title for item in recall.items]}",
        )
        expect(
            recall.candidate_count == len(expected),
            f"{recall.candidate_count} candidates passed the similarity floor, "
            f"expected {len(expected)}",
        )
        search = pack.search(DOCS_QUERY)
        expect(search.ids == recall.ids, f"search ranked {search.ids}, recall {recall.ids}")
        expect(search.episode_id is None, "search must not log an episode")
    top = recall.items[0]
    return f"{top.title!r} first (cosine {top.similarity:.3f}) of {recall.candidate_count}"


def _loss_pack(pack: Pack) -> tuple[list[str], str]:
    """Four related memories and one off-topic; returns (related ids, off-topic id)."""
    related = [pack.remember(intent, response).id for intent, response in LOSS_MEMORIES]
    expect(len(set(related)) == len(LOSS_MEMORIES), "the related memories merged unexpectedly")
    return related, pack.remember(*OFF_TOPIC_MEMORY).id


def check_utility_movement(target: PackTarget) -> str:
    """(c) feedback moves each injected utility 0 -> 0.3 -> -0.09; the values persist."""
    name = target.new_name("utility")
    with target.open(name) as pack:
        related, off_topic = _loss_pack(pack)
        recall = pack.recall(LOSS_QUERY)
        injected = recall.ids
        expect(
            len(injected) == pack.settings.ranking.k2, f"expected k2 injected items, got {injected}"
        )
        expect(all(item.track_record == 0.0 for item in recall.items), "utilities must start at 0")
        episode = logged(recall)
        idle = [m for m in [*related, off_topic] if m not in injected]
        for rating, expected in ((1.0, Q_AFTER_WIN), (-1.0, Q_AFTER_WIN_LOSS)):
            result = pack.feedback(episode, rating)
            expect(result.applied == len(injected), f"feedback applied to {result.applied}")
            for memory_id in injected:
                expect_close(result.track_records[memory_id], expected, f"utility of {memory_id}")
                expect_close(pack.get(memory_id)["utility"], expected, f"get({memory_id})")
        pack.flush()
    with target.open(name, create=False) as pack:
        for memory_id in injected:
            row = pack.get(memory_id)
            expect_close(row["utility"], Q_AFTER_WIN_LOSS, f"reopened utility of {memory_id}")
            expect(row["reward_count"] == 2, f"reward_count {row['reward_count']} != 2")
        for memory_id in idle:
            expect(pack.get(memory_id)["utility"] == 0.0, f"{memory_id} was not injected")
        # A reopened Pack finds the episode in the log, not in its in-memory cache.
        again = pack.feedback(episode, 1.0)
        for memory_id in injected:
            expect_close(again.track_records[memory_id], Q_AFTER_WIN_LOSS_WIN, "after reopen")
    return (
        f"{len(injected)} memories 0 -> {Q_AFTER_WIN:.2f} -> {Q_AFTER_WIN_LOSS:.2f}, "
        "persisted across reopen"
    )


def _table_rows(pack: Pack, table: str, column: str, value: str) -> list[dict[str, Any]]:
    return [r for r in stored_rows(pack, table) if r[column] == value]


def check_logged_episode(target: PackTarget) -> str:
    """(d) After flush: the episode, one log row per candidate, one reward per memory."""
    with target.open(target.new_name("episode")) as pack:
        _loss_pack(pack)
        recall = pack.recall(LOSS_QUERY)
        episode = logged(recall)
        pack.feedback(episode, 1.0)
        pack.feedback(episode, -1.0)
        pack.flush()
        episodes = _table_rows(pack, S.EPISODES, "id", episode)
        expect(len(episodes) == 1, f"{len(episodes)} rows for episode {episode}")
        expect(
            list(episodes[0]["injected_ids"]) == recall.ids,
            f"injected_ids {episodes[0]['injected_ids']} != recalled {recall.ids}",
        )
        expect(
            len(episodes[0]["candidate_ids"]) == recall.candidate_count,
            f"candidate_ids {len(episodes[0]['candidate_ids'])} != {recall.candidate_count}",
        )
        log = _table_rows(pack, S.RETRIEVAL_LOG, "episode_id", episode)
        expect(
            len(log) == recall.candidate_count,
            f"{len(log)} retrieval_log rows for {recall.candidate_count} candidates",
        )
        flagged = [r["item_id"] for r in sorted(log, key=_final_rank) if r["injected"]]
        expect(flagged == recall.ids, f"injected flags {flagged} != recalled {recall.ids}")
        expect(
            all(r["final_rank"] is None for r in log if not r["injected"]),
            "a candidate that was not injected has a final_rank",
        )
        rewards = _table_rows(pack, S.REWARD_EVENTS, "episode_id", episode)
        expect(
            len(rewards) == 2 * len(recall.ids),
            f"{len(rewards)} reward_events for 2 feedbacks x {len(recall.ids)} memories",
        )
        for memory_id in recall.ids:
            steps = sorted((r for r in rewards if r["memory_id"] == memory_id), key=_seq)
            values = [(r["value"], r["q_after"]) for r in steps]
            expect(
                len(values) == 2 and values[0][0] == 1.0 and values[1][0] == -1.0,
                f"reward values of {memory_id}: {values}",
            )
            expect_close(values[0][1], Q_AFTER_WIN, f"q_after of {memory_id}'s 1st reward")
            expect_close(values[1][1], Q_AFTER_WIN_LOSS, f"q_after of {memory_id}'s 2nd reward")
    return (
        f"episode, {len(log)} retrieval_log rows ({len(recall.ids)} injected), "
        f"{len(rewards)} reward_events"
    )


def _final_rank(row: Mapping[str, Any]) -> float:
    rank = row["final_rank"]
    return math.inf if rank is None else float(rank)


def _seq(row: Mapping[str, Any]) -> int:
    return int(row["seq"])


def check_ranking_change(target: PackTarget) -> str:
    """(e) Rewarding the 2nd-ranked item and punishing the top one swaps them.

    After 3 rounds the utilities are -0.657 (top) and +0.657 (2nd). The 2nd item is
    chosen, not the last: the last one's similarity deficit can be large enough that an
    unrewarded middle item with its exploration bonus legitimately wins instead.
    """
    with target.open(target.new_name("rerank")) as pack:
        ids = pack.add_knowledge(PLAYBOOK)
        source_of = dict(zip(ids, (c.source for c in PLAYBOOK), strict=True))
        before = pack.search(PLAYBOOK_QUERY).ids
        expect(len(before) >= 2, f"need two ranked items, got {before}")
        top, low = before[0], before[1]
        for _ in range(TRAINING_ROUNDS):
            # Filtering on the source makes the episode inject exactly that one item.
            for item, rating in ((low, 1.0), (top, -1.0)):
                recall = pack.recall(PLAYBOOK_QUERY, where={"source": source_of[item]})
                expect(recall.ids == [item], f"filtered recall injected {recall.ids}")
                pack.feedback(logged(recall), rating)
        after = pack.search(PLAYBOOK_QUERY).ids
        expect(after[0] == low, f"rewarded item should rank first: before {before}, after {after}")
        expect(
            top not in after or after.index(top) > after.index(low),
            f"punished item should fall below the rewarded one: {after}",
        )
    rank = after.index(top) + 1 if top in after else "gone"
    return f"2nd -> 1st after {TRAINING_ROUNDS} rounds; former top now {rank}"


def check_read_only(target: PackTarget) -> str:
    """(f) A read-only handle searches and sees new commits; every write raises ReadOnlyPack."""
    name = target.new_name("readonly")
    try:
        target.open(name, read_only=True)
    except PackNotFound:
        pass
    else:
        raise CheckFailed("read-only open of a missing Pack should raise PackNotFound")
    with target.open(name) as writer:
        ids = writer.add_knowledge(DOCS[:4])
        episode = logged(writer.recall(DOCS_QUERY))
        writer.flush()
        with target.open(name, read_only=True) as reader:
            found = reader.search(DOCS_QUERY)
            expect(found.ids[:1] == ids[:1], f"read-only search ranked {found.ids}")
            expect(found.episode_id is None, "read-only search must not log an episode")
            writes: dict[str, Callable[[], object]] = {
                "remember": lambda: reader.remember(*PASSWORD),
                "recall": lambda: reader.recall(DOCS_QUERY),
                "feedback": lambda: reader.feedback(episode, 1.0),
                "add_knowledge": lambda: reader.add_knowledge(DOCS[4:]),
            }
            for what, call in writes.items():
                try:
                    call()
                except ReadOnlyPack:
                    continue
                raise CheckFailed(f"read-only {what}() should raise ReadOnlyPack")
            # The reader sees a commit made after it opened, without reopening.
            new_id = writer.add_knowledge(DOCS[4:])[0]
            fresh = reader.search(DOCS[4].text, k=1)
            expect(fresh.ids == [new_id], f"reader missed a new commit: {fresh.ids}")
            episodes = reader.count(S.EPISODES)
        expect(episodes == 1, f"read-only calls changed the episode count to {episodes}")
    return f"search ok, {len(writes)} writes refused, new commit visible"


CHECKS: dict[str, Callable[[PackTarget], str]] = {
    "dedup": check_dedup,
    "recall order": check_recall_order,
    "utility movement": check_utility_movement,
    "logged episode": check_logged_episode,
    "ranking change": check_ranking_change,
    "read-only": check_read_only,
}
