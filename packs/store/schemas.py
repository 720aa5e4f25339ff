"""The Arrow schemas of every Pack table, in one place.

``SCHEMA_VERSION`` is recorded in the Pack's ``pack_meta`` table. A Pack written by a
newer schema than this code knows is refused (:class:`SchemaVersionError`) rather than
misread; an older one is brought up to date when opened writable by the named steps of
:mod:`packs.store.migrate` (version 2 added the lifecycle columns and ``forgotten``,
3 ``memory_history``, 4 the admission and lesson provenance columns, 5 the BM25 score
in ``retrieval_log`` and ``tuning``, 6 the slate columns and the lesson scope).
Vector columns depend on the embedder's dimension, so the schemas are built by
functions of ``dim``.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 6

MEMORIES = "memories"
EPISODES = "episodes"
RETRIEVAL_LOG = "retrieval_log"
REWARD_EVENTS = "reward_events"
STATE_TRACES = "state_traces"
PACK_META = "pack_meta"
VALIDATIONS = "validations"
LESSON_LOG = "lesson_log"
MERGES = "merges"
FORGOTTEN = "forgotten"  # one tombstone per forget call (ids only, never text)
MEMORY_HISTORY = "memory_history"  # one row per revision (schema 3)
TUNING = "tuning"  # one row per tuning run, its evidence and what it adopted (schema 5)
# Not a table: buffered updates of resolved episodes, written into EPISODES.
EPISODE_OUTCOMES = "episode_outcomes"
OUTCOME_COLUMNS = ("id", "response", "response_embedding", "success", "resolved_at")

KIND_MEMORY = "memory"
KIND_KNOWLEDGE = "knowledge"
# The text a row is found by (BM25 in Phase A): a knowledge chunk's text and title, a
# memory's intent, response and lesson.
TEXT_COLUMNS = ("intent_text", "response_summary", "experience_summary", "title")

TS = pa.timestamp("us", tz="UTC")


def vector(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


PROVENANCE = pa.struct(
    [
        pa.field("source", pa.string()),
        pa.field("at", TS),
        pa.field("intent_text", pa.string()),
        pa.field("metadata_json", pa.string()),
    ]
)


# Schema 2 (docs/forgetting.md): a memory past ``expires_at`` is never recalled; one with
# ``superseded_at`` set is history, not advice. Added last, so an older Pack gains them
# as null columns (packs/store/migrate.py).
LIFECYCLE_FIELDS = (
    pa.field("expires_at", TS),
    pa.field("superseded_by", pa.string()),
    pa.field("superseded_at", TS),
    pa.field("superseded_reason", pa.string()),
)


# Schema 4 (issue 30): a memory held on probation by admission control (``held_at`` set)
# joins recall once a repeat, or a positive reward of ``held_episode`` (the episode it was
# remembered from), confirms it (docs/admission.md).
ADMISSION_FIELDS = (
    pa.field("held_at", TS),
    pa.field("held_reason", pa.string()),
    pa.field("held_episode", pa.string()),
)


def memories_schema(dim: int) -> pa.Schema:
    """Memories and knowledge chunks share one retrieval table, told apart by ``kind``."""
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("intent_text", pa.string(), nullable=False),
            pa.field("intent_embedding", vector(dim), nullable=False),
            pa.field("response_summary", pa.string()),
            pa.field("response_embedding", vector(dim)),
            pa.field("outcome", pa.string()),
            pa.field("utility", pa.float64(), nullable=False),
            pa.field("confidence", pa.float64(), nullable=False),
            pa.field("signal_polarity", pa.string()),
            pa.field("experience_summary", pa.string()),
            pa.field("usage_count", pa.int64(), nullable=False),
            pa.field("reward_count", pa.int64(), nullable=False),
            pa.field("merge_count", pa.int64(), nullable=False),
            pa.field("source", pa.string()),
            pa.field("source_position", pa.int64()),
            pa.field("title", pa.string()),
            pa.field("start_s", pa.float64()),
            pa.field("end_s", pa.float64()),
            pa.field("metadata_json", pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("provenance", pa.list_(PROVENANCE)),
            pa.field("created_at", TS, nullable=False),
            pa.field("updated_at", TS, nullable=False),
            pa.field("last_used_at", TS),
            pa.field("lesson_at", TS),
            *LIFECYCLE_FIELDS,
            *ADMISSION_FIELDS,
        ]
    )


def episodes_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("created_at", TS, nullable=False),
            pa.field("query_text", pa.string(), nullable=False),
            pa.field("query_embedding", vector(dim), nullable=False),
            pa.field("k1", pa.int32(), nullable=False),
            pa.field("k2", pa.int32(), nullable=False),
            pa.field("filter_json", pa.string()),
            pa.field("candidate_ids", pa.list_(pa.string())),
            pa.field("injected_ids", pa.list_(pa.string())),
            pa.field("settings_version", pa.int64()),
            pa.field("response", pa.string()),
            pa.field("response_embedding", vector(dim)),
            pa.field("success", pa.bool_()),
            pa.field("resolved_at", TS),
        ]
    )


RETRIEVAL_LOG_SCHEMA = pa.schema(
    [
        pa.field("episode_id", pa.string(), nullable=False),
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("phase_a_rank", pa.int32(), nullable=False),
        pa.field("similarity", pa.float64(), nullable=False),
        pa.field("lexical", pa.float64()),  # BM25 score (0 outside its list); schema 5
        pa.field("utility", pa.float64(), nullable=False),
        pa.field("contextual_utility", pa.float64()),  # what Phase B ranked by, if contextual
        pa.field("confidence", pa.float64(), nullable=False),
        pa.field("z_similarity", pa.float64(), nullable=False),
        pa.field("z_utility", pa.float64(), nullable=False),
        pa.field("z_confidence", pa.float64(), nullable=False),
        pa.field("bonus", pa.float64(), nullable=False),
        pa.field("score", pa.float64(), nullable=False),
        pa.field("injected", pa.bool_(), nullable=False),
        pa.field("final_rank", pa.int32()),
        pa.field("created_at", TS, nullable=False),
        # schema 6: why a slate member is there beyond its score ("reserved": the
        # unrewarded top-1's slot, "explored": an exploration swap), and the swap's chance
        pa.field("placed_by", pa.string()),
        pa.field("propensity", pa.float64()),
    ]
)

# One row per (reward, memory). ``event_id`` is derived from the episode, the caller's
# idempotency key and the memory id, so a redelivered reward is recognised and applied
# once (ids of Packs written before issue 23 derive from the key and memory alone). ``alpha``
# and ``weight`` are the step actually used, so a replay reproduces the online value even
# after the Pack's settings change.
REWARD_EVENTS_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("idempotency_key", pa.string(), nullable=False),
        pa.field("episode_id", pa.string(), nullable=False),
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("signal", pa.string(), nullable=False),
        pa.field("magnitude", pa.float64()),
        pa.field("value", pa.float64(), nullable=False),
        pa.field("weight", pa.float64(), nullable=False),
        pa.field("alpha", pa.float64(), nullable=False),
        pa.field("confidence_rate", pa.float64(), nullable=False),
        pa.field("q_before", pa.float64()),
        pa.field("q_after", pa.float64()),
        pa.field("created_at", TS, nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
    ]
)

STATE_TRACES_SCHEMA = pa.schema(
    [
        pa.field("at", TS, nullable=False),
        pa.field("episode_count", pa.int64(), nullable=False),
        pa.field("memory_count", pa.int64(), nullable=False),
        pa.field("knowledge_count", pa.int64(), nullable=False),
        pa.field("reward_count", pa.int64(), nullable=False),
        pa.field("q_variance", pa.float64()),
        pa.field("q_noise_floor", pa.float64()),
        pa.field("q_variance_ratio", pa.float64()),
        pa.field("hit_rate", pa.float64()),
        pa.field("coverage", pa.float64()),
        pa.field("feedback_density", pa.float64()),
        pa.field("stage", pa.string(), nullable=False),
    ]
)

# One row per validation-hook call: what was checked, the verdict, and any hook error.
VALIDATIONS_SCHEMA = pa.schema(
    [
        pa.field("at", TS, nullable=False),
        pa.field("episode_id", pa.string(), nullable=False),
        pa.field("hook", pa.string(), nullable=False),
        pa.field("output", pa.string(), nullable=False),
        pa.field("passed", pa.bool_()),
        pa.field("flagged", pa.bool_(), nullable=False),
        pa.field("error", pa.string()),
    ]
)

# One row per near-duplicate absorbed by a memory (append-only, so concurrent writers
# never overwrite each other's provenance). ``merge_id`` makes a retried remember a no-op.
MERGES_SCHEMA = pa.schema(
    [
        pa.field("merge_id", pa.string(), nullable=False),
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("source", pa.string()),
        pa.field("intent_text", pa.string(), nullable=False),
        pa.field("response_summary", pa.string()),
        pa.field("outcome", pa.string()),
        pa.field("metadata_json", pa.string()),
        pa.field("similarity", pa.float64(), nullable=False),
    ]
)

# One row per revision of a memory (``Pack.revise``): what changed, old and new, without
# embeddings. With the memory row and its ``merges`` it is the memory's history.
MEMORY_HISTORY_SCHEMA = pa.schema(
    [
        pa.field("version_id", pa.string(), nullable=False),
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("event", pa.string(), nullable=False),  # "revise"
        pa.field("source", pa.string()),  # the caller's provenance: api, cli, mcp
        pa.field("changes_json", pa.string(), nullable=False),  # {field: {old, new}}
        pa.field("utility_before", pa.float64()),  # the track record a revision reset
        pa.field("utility_reset", pa.bool_(), nullable=False),
    ]
)

# One row per lesson the lessons flow tried to write, kept or not.
# Schema 4 (issue 30): which model wrote a lesson (as its client named it, for lessons
# sampled over MCP) and the episode whose reward asked for it.
LESSON_PROVENANCE_FIELDS = (
    pa.field("model", pa.string()),
    pa.field("episode_id", pa.string()),
)
# Schema 6 (issue 42): the scope whose caller wrote a lesson of a *shared* memory (null:
# the memory's own lesson, written by an unscoped caller or in the memory's own scope).
# Such a lesson is that scope's only: recall shows it to that scope, never to another.
LESSON_SCOPE_FIELDS = (pa.field("scope", pa.string()),)
LESSON_LOG_SCHEMA = pa.schema(
    [
        pa.field("at", TS, nullable=False),
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string()),
        pa.field("status", pa.string(), nullable=False),  # "written" or "failed"
        pa.field("lesson", pa.string()),
        pa.field("confidence", pa.float64()),  # the confidence the lesson was written at
        pa.field("error", pa.string()),
        *LESSON_PROVENANCE_FIELDS,
        *LESSON_SCOPE_FIELDS,
    ]
)

# One row per ``Pack.forget`` call: which memories and episodes went, so other processes
# drop them from their caches (packs/journal/forgotten.py), and whether the older versions
# still holding them were purged (``purged_at`` null: maintain-pack purges them).
FORGOTTEN_SCHEMA = pa.schema(
    [
        pa.field("forget_id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("memory_ids", pa.list_(pa.string())),
        pa.field("episode_ids", pa.list_(pa.string())),
        pa.field("scopes", pa.list_(pa.string())),  # a forgotten scope's digest, not its name
        pa.field("tables", pa.list_(pa.string())),  # tables rows were deleted from
        pa.field("purged_at", TS),
    ]
)

# Schema 5: the BM25 column the tuner replays Phase B with (packs/tuning/replay.py).
RETRIEVAL_LOG_FIELDS_5 = (RETRIEVAL_LOG_SCHEMA.field("lexical"),)
RETRIEVAL_LOG_FIELDS_6 = tuple(RETRIEVAL_LOG_SCHEMA.field(n) for n in ("placed_by", "propensity"))

# One row per tuning run (packs/tuning/service.py): numbers and settings, never user text.
TUNING_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("trigger", pa.string(), nullable=False),  # "command", "schedule" or "auto"
        pa.field("dry_run", pa.bool_(), nullable=False),
        pa.field("adopted", pa.bool_(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("in_force_json", pa.string(), nullable=False),  # the settings compared
        pa.field("fitted_json", pa.string(), nullable=False),  # the values the fit proposed
        pa.field("evidence_json", pa.string(), nullable=False),  # what the fit was made from
        pa.field("estimate_json", pa.string(), nullable=False),  # held-out replay comparison
        pa.field("settings_before", pa.int64(), nullable=False),
        pa.field("settings_after", pa.int64(), nullable=False),
    ]
)

PACK_META_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("value_json", pa.string(), nullable=False),
        pa.field("updated_at", TS, nullable=False),
    ]
)


def all_schemas(dim: int) -> dict[str, pa.Schema]:
    """Every table a Pack holds, by name."""
    return {
        MEMORIES: memories_schema(dim),
        EPISODES: episodes_schema(dim),
        RETRIEVAL_LOG: RETRIEVAL_LOG_SCHEMA,
        REWARD_EVENTS: REWARD_EVENTS_SCHEMA,
        STATE_TRACES: STATE_TRACES_SCHEMA,
        VALIDATIONS: VALIDATIONS_SCHEMA,
        LESSON_LOG: LESSON_LOG_SCHEMA,
        MERGES: MERGES_SCHEMA,
        FORGOTTEN: FORGOTTEN_SCHEMA,
        MEMORY_HISTORY: MEMORY_HISTORY_SCHEMA,
        TUNING: TUNING_SCHEMA,
        PACK_META: PACK_META_SCHEMA,
    }


def buffer_schemas(dim: int) -> dict[str, pa.Schema]:
    """Schemas of what the write buffer holds: tables plus episode outcome updates."""
    episodes = episodes_schema(dim)
    outcomes = pa.schema([episodes.field(name) for name in OUTCOME_COLUMNS])
    return {**all_schemas(dim), EPISODE_OUTCOMES: outcomes}


# Created on demand by the eval flow (``evals/eval_runs.py``), not by ``PackStore.create``:
# one row per typed metric of one eval run, so trends over time can be queried.
EVAL_RUNS = "eval_runs"
EVAL_RUNS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("at", TS, nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("k", pa.int32()),
        pa.field("value", pa.float64(), nullable=False),
        pa.field("higher_is_better", pa.bool_(), nullable=False),
        pa.field("queries", pa.int64(), nullable=False),
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("dataset_digest", pa.string()),
        pa.field("pack", pa.string(), nullable=False),
        pa.field("pack_version", pa.int64()),  # the memories table version scored
        pa.field("settings_version", pa.int64()),
        pa.field("embedding", pa.string()),  # "provider:model" that embedded the queries
    ]
)

# Created on first use by ``packs/eval_sets.py``: one row per named eval set, its JSONL text.
EVAL_SETS = "eval_sets"
EVAL_SETS_SCHEMA = pa.schema(
    [
        pa.field("name", pa.string(), nullable=False),
        pa.field("jsonl", pa.large_string(), nullable=False),
        pa.field("digest", pa.string(), nullable=False),  # sha256 of the JSONL text
        pa.field("source", pa.string()),  # where it came from (a file, a bundle)
        pa.field("stored_at", TS, nullable=False),
    ]
)

# The tables a write creates when the Pack lacks them (``PackStore.append`` and ``merge``):
# the eval tables, made on first use, and the logs a Pack of schema 1 could lack (every
# table of a migrated Pack exists: packs/store/migrate.py). None has a vector column.
CREATED_ON_WRITE = {
    EVAL_RUNS: EVAL_RUNS_SCHEMA,
    EVAL_SETS: EVAL_SETS_SCHEMA,
    MERGES: MERGES_SCHEMA,
    LESSON_LOG: LESSON_LOG_SCHEMA,
    MEMORY_HISTORY: MEMORY_HISTORY_SCHEMA,
}
