"""One description and one set of limits per parameter name, shared by the doors that
take parameters: the MCP tools (:func:`wolfie.mcp.params.describe` puts a row in each
tool's input schema) and the REST bodies and paths (:mod:`wolfie.api.models`,
:mod:`wolfie.api.deps`), so a parameter reads and bounds the same at both. A ``tool.name``
row is for one tool's parameter where the shared row would say the wrong thing. Text
lengths (:data:`TEXT`) follow the Pack's ``max_text_chars``, which the engine checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packs.store.filters import MAX_FILTER_TERMS, MAX_FILTER_VALUES
from packs.store.scopes import MAX_SCOPE_CHARS
from packs.validation import MAX_METADATA_KEYS

TEXT = "text"  # marks a free-text parameter: at most the Pack's max_text_chars
ID_CHARS = 256  # episode and memory ids are ~35 characters; keys are the caller's own
MAX_SOURCES = 100
MAX_MEMORY_IDS = 100  # a recall returns at most k <= 100 items

FILTERS = (
    "Keep only items that match every key: a column (kind: 'memory' or 'knowledge', "
    "source, title, signal_polarity, outcome, id, source_position) or a metadata key, "
    "mapped to a value or to a list of values meaning any of them; e.g. "
    '{"kind": "knowledge", "symbol": ["NVDA", "AMD"]}. '
    f"At most {MAX_FILTER_TERMS} keys and {MAX_FILTER_VALUES:,} values a list."
)


@dataclass(frozen=True)
class Param:
    description: str
    limits: dict[str, Any] = field(default_factory=dict)  # pydantic Field constraints


PARAMS: dict[str, Param] = {
    "query": Param("The user's request or question, in their words.", {"min_length": 1, TEXT: 1}),
    "k": Param(
        "How many items to return, 1 to 100 (default: the Pack's k2).", {"ge": 1, "le": 100}
    ),
    "filters": Param(FILTERS, {"max_length": MAX_FILTER_TERMS}),
    "explain": Param(
        "true: each item also carries `explain`, why it ranked there (Phase A's similarity, "
        "BM25 and relevance with their ranks, the blend's terms that sum to its score, the "
        "past questions behind its utility, a link that placed it)."
    ),
    "scope": Param(
        "A user or session id: the call sees that scope's rows and the shared ones, and "
        "writes into that scope. Pass the same scope on every call for one user.",
        {"min_length": 1, "max_length": MAX_SCOPE_CHARS},
    ),
    "episode_id": Param(
        "The episode_id that recall returned.", {"min_length": 1, "max_length": ID_CHARS}
    ),
    "rating": Param(
        "How the recalled items did: -1 misled, 0 neutral, +1 helped, or any number in between.",
        {"ge": -1.0, "le": 1.0},
    ),
    "name": Param("The implicit signal, one of the Pack's reward vocabulary."),
    "memory_ids": Param(
        "Only these recalled item ids get the signal (default: every item of the episode).",
        {"min_length": 1, "max_length": MAX_MEMORY_IDS},
    ),
    "idempotency_key": Param(
        "A string naming this reward once: a retry with the same key changes nothing.",
        {"min_length": 1, "max_length": ID_CHARS},
    ),
    "intent": Param("What was asked or attempted, in words.", {"min_length": 1, TEXT: 1}),
    "response": Param("What was done or answered, in words.", {"min_length": 1, TEXT: 1}),
    "outcome": Param("How it turned out, in words.", {"min_length": 1, TEXT: 1}),
    "polarity": Param(
        "'success' for something to repeat; 'failure' marks a mistake to warn about."
    ),
    "metadata": Param(
        f"Facts to filter on later: an object of at most {MAX_METADATA_KEYS} keys, each "
        "mapped to a string, number, boolean or null.",
        {"max_length": MAX_METADATA_KEYS},
    ),
    "amount": Param(
        "The measured outcome (e.g. a P&L); the reward is tanh(amount / the Pack's outcome scale).",
        {"allow_inf_nan": False},
    ),
    "success": Param("Whether the episode succeeded, if known."),
    "sources": Param(
        "Direct media URLs, media files, documents (.md, .txt, .html) or folders of "
        "documents, within what the operator allowed (see the tool's description).",
        {"min_length": 1, "max_length": MAX_SOURCES},
    ),
    "run_id": Param("The run_id that ingest returned.", {"pattern": r"^mcp-ingest-[0-9a-f]{12}$"}),
    "limit": Param("How many runs, newest first.", {"ge": 1, "le": 1000}),
    "memory_id": Param(
        "A memory's id, as recall or remember returned it.",
        {"min_length": 1, "max_length": ID_CHARS},
    ),
    "where": Param(
        "Forget what matches: an object of column or metadata keys mapped to a value or a "
        "list of values (as recall's filters).",
        {"min_length": 1, "max_length": MAX_FILTER_TERMS},
    ),
    "confidence": Param(
        "How sure you are of this memory, 0 to 1; with the Pack's admission control on, a "
        "low one holds it on probation until a repeat or a positive reward confirms it.",
        {"ge": 0.0, "le": 1.0, "allow_inf_nan": False},
    ),
    "supersedes": Param(
        "The id of a memory this one corrects, stated outright: it is stored as a new memory "
        "and supersedes that one (a memory of your scope).",
        {"min_length": 1, "max_length": ID_CHARS},
    ),
    "purge": Param(
        "Also remove the older stored versions and files that still hold the rows, now "
        "(else the nightly maintain-pack does)."
    ),
    # A row for one tool's parameter, where the shared one would say the wrong thing.
    "forget.memory_ids": Param(
        "The ids of the memories or knowledge chunks to forget, as recall, search or "
        "remember returned them.",
        {"min_length": 1, "max_length": MAX_MEMORY_IDS},
    ),
    "forget.scope": Param(
        "Forget every row of this user or session: its memories, its knowledge and the "
        "episodes recalled in it.",
        {"min_length": 1, "max_length": MAX_SCOPE_CHARS},
    ),
}
