"""The REST API's request bodies and its error envelope.

Every field takes its description and limits from the one table the MCP tools use
(:data:`wolfie.params.PARAMS`), so a parameter reads and bounds the same at both
doors. Unknown keys are refused (a misspelt ``raiting`` is an error, not a default). Text
lengths are the Pack's own ``max_text_chars``, checked by the engine. Results are the
engine's records (``to_dict()``), declared as the routes' response models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from packs.validation import MAX_POSITION
from wolfie.params import PARAMS, TEXT
from wolfie.reward_verbs import VERBS, Verb

_REQUIRED: Any = ...
# A metadata or filter value: JSON scalars only; NaN and infinities are refused.
Scalar = str | int | Annotated[float, Field(allow_inf_nan=False)] | bool | None
MAX_CHUNKS = 1_000  # chunks per knowledge call (hand-set: the engine embeds in batches)


def param(name: str, default: Any = _REQUIRED) -> Any:
    """A field described and bounded by ``PARAMS[name]`` (``tool.name`` rows too; text
    lengths are the engine's)."""
    row = PARAMS[name]
    limits = {key: value for key, value in row.limits.items() if key != TEXT}
    return Field(default, description=row.description, **limits)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberBody(Body):
    intent: str = param("intent")
    response: str = param("response")
    outcome: str | None = param("outcome", None)
    polarity: Literal["success", "failure"] | None = param("polarity", None)
    metadata: dict[str, Scalar] | None = param("metadata", None)
    scope: str | None = param("scope", None)
    supersedes: str | None = param("supersedes", None)


class Chunk(Body):
    text: str = Field(description="The chunk's text.", min_length=1)
    source: str = Field(description="Where it comes from (a file, a URL).", min_length=1)
    position: int = Field(
        description="Its place in the source; with source, its id.", ge=0, lt=MAX_POSITION + 1
    )
    title: str | None = Field(
        None, description="A heading or title for it (at most the Pack's max_text_chars)."
    )
    start_s: float | None = Field(None, description="Media: where it starts, in seconds.")
    end_s: float | None = Field(None, description="Media: where it ends, in seconds.")
    metadata: dict[str, Scalar] | None = param("metadata", None)


class KnowledgeBody(Body):
    chunks: list[Chunk] = Field(
        description=f"Chunks to add (at most {MAX_CHUNKS:,}); adding one again changes nothing.",
        min_length=1,
        max_length=MAX_CHUNKS,
    )
    scope: str | None = param("scope", None)


class RankBody(Body):
    query: str = param("query")
    k: int | None = param("k", None)
    filters: dict[str, Scalar | list[Scalar]] | None = param("filters", None)
    scope: str | None = param("scope", None)
    explain: bool | None = param("explain", None)


def reward_body(verb: Verb) -> type[Body]:
    """A reward verb's body (``FeedbackBody``...): its arguments, then an idempotency key."""
    fields: dict[str, Any] = {
        arg.name: (arg.type, param(arg.name))
        if arg.required
        else (arg.type | None, param(arg.name, None))
        for arg in verb.args
    }
    fields["idempotency_key"] = (str | None, param("idempotency_key", None))
    name = f"{verb.name.capitalize()}Body"
    return create_model(name, __base__=Body, __module__=__name__, **fields)


REWARD_BODIES = {verb.name: reward_body(verb) for verb in VERBS}


class ReviseBody(Body):
    intent: str | None = param("intent", None)
    response: str | None = param("response", None)
    outcome: str | None = param("outcome", None)
    polarity: Literal["success", "failure", "none"] | None = param("polarity", None)
    metadata: dict[str, Scalar] | None = param("metadata", None)
    scope: str | None = param("scope", None)


class ForgetBody(Body):
    memory_ids: list[str] | None = param("forget.memory_ids", None)
    scope: str | None = param("forget.scope", None)
    where: dict[str, Scalar | list[Scalar]] | None = param("where", None)
    purge: bool = param("purge", False)


class ErrorDetail(BaseModel):
    type: str = Field(description="The error's class, e.g. InvalidInput, UnknownEpisode.")
    message: str = Field(description="What was wrong and how to fix it, on one line.")


class ErrorBody(BaseModel):
    """Every 4xx and 5xx answer: ``{"error": {"type": ..., "message": ...}}``."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
