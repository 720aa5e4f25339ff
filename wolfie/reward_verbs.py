"""The reward verbs, ``feedback``, ``signal`` and ``outcome``: one row each, for every door.

Each door registers its reward calls from :data:`VERBS`, with no hand-written copy: the
MCP tools (:mod:`wolfie.mcp.catalog` lists them, :mod:`wolfie.mcp.server` builds their
bodies), the REST routes (:mod:`wolfie.api.reward_routes`, bodies in
:mod:`wolfie.api.models`) and the CLI commands (:mod:`wolfie.commands.memory`). A row
holds the verb's name, what each door says about it, and its arguments; an argument's
description and limits at MCP and REST are its row of :data:`wolfie.params.PARAMS`
(by the argument's name), its CLI flags and help are here. :meth:`Verb.reward` turns the
arguments a door received into one reward of :mod:`packs.rewards.kinds`, which
:func:`wolfie.front_door.reward` applies (``Pack.reward``). Every door also takes the
episode id and an idempotency key; MCP a scope, REST the server's pinned scope.

Nothing heavy is imported: ``wolfie --help`` reads this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from packs.errors import InvalidInput
from packs.rewards.kinds import Outcome, Rating, Reward, Signal

F = TypeVar("F", bound=Callable[..., Any])
# A door's own parameter: its name, annotation and default (REQUIRED: none).
REQUIRED: Any = inspect.Parameter.empty
Fixed = tuple[str, Any, Any]


@dataclass(frozen=True)
class Arg:
    """One argument of a verb. ``name`` is the MCP parameter and the REST body field (its
    ``PARAMS`` row); ``field`` the reward kind's field it fills (default: ``name``)."""

    name: str
    type: Any  # float, str, list[str]; an optional one is ``type | None``, default None
    required: bool
    cli_help: str
    cli_flags: tuple[str, ...] = ()  # none: a positional CLI argument
    field: str = ""

    @property
    def kind_field(self) -> str:
        return self.field or self.name


@dataclass(frozen=True)
class Verb:
    name: str
    kind: type[Rating] | type[Signal] | type[Outcome]
    args: tuple[Arg, ...]
    summary: str  # one line: ``wolfie mcp --help``
    description: str  # what an agent reads in the MCP tool list ({lessons}: the server's)
    route_summary: str  # the REST route's OpenAPI summary
    short_help: str  # ``wolfie --help``
    help: str  # ``wolfie VERB --help``
    lessons: bool = False  # MCP: then ask a sampling client for the lessons it earned

    @property
    def required(self) -> tuple[Arg, ...]:
        return tuple(arg for arg in self.args if arg.required)

    @property
    def optional(self) -> tuple[Arg, ...]:
        return tuple(arg for arg in self.args if not arg.required)

    def reward(self, arguments: Mapping[str, Any]) -> Reward:
        """The reward these ``arguments`` (by :attr:`Arg.name`) say; the engine checks
        their values (``Pack.reward``)."""
        names = [arg.name for arg in self.args]
        wrong = [f"unknown {name!r}" for name in sorted(set(arguments) - set(names))]
        wrong += [f"no {a.name}" for a in self.required if arguments.get(a.name) is None]
        if wrong:
            raise InvalidInput(f"{self.name} takes {', '.join(names)}: {', '.join(wrong)}.")
        values: dict[str, Any] = {arg.kind_field: arguments.get(arg.name) for arg in self.args}
        return self.kind(**values)

    def signature(
        self,
        annotate: Callable[[Arg, Any], Any],
        *,
        head: Sequence[Fixed] = (),
        middle: Sequence[Fixed] = (),
        tail: Sequence[Fixed] = (),
    ) -> list[inspect.Parameter]:
        """A door's parameters for this verb: ``head``, the required arguments,
        ``middle``, the optional ones (default None), ``tail``. ``annotate(arg, type)``
        gives an argument the door's annotation (its description, limits, CLI flags)."""
        own = [(a.name, annotate(a, a.type), REQUIRED) for a in self.required]
        optional = [(a.name, annotate(a, a.type | None), None) for a in self.optional]
        return parameters([*head, *own, *middle, *optional, *tail])


VERBS: tuple[Verb, ...] = (
    Verb(
        "feedback",
        Rating,
        (
            Arg(
                "rating",
                float,
                True,
                "-1 (misled) to +1 (helped).",
                ("--rating", "-r"),
                field="value",
            ),
        ),
        summary="rate an episode from -1 to +1",
        description="Reward a recall's episode once you know how it went: `rating` in "
        "[-1, 1], +1 helped, -1 misled. Every recalled memory's utility moves. An "
        "`idempotency_key` makes retries safe. {lessons}",
        route_summary="Rate an episode",
        short_help="Rate a recalled episode from -1 to +1.",
        help="Rate EPISODE_ID: every memory it injected moves toward the rating (EMA).",
        lessons=True,
    ),
    Verb(
        "signal",
        Signal,
        (
            Arg("name", str, True, "acted_on, accepted, edited, ignored, or the Pack's own."),
            Arg(
                "memory_ids",
                list[str],
                False,
                "Only this injected memory; repeatable.",
                ("--memory-id", "-m"),
            ),
        ),
        summary="an implicit signal (accepted, edited, ignored, acted_on)",
        description="Implicit feedback on an episode: `name` is accepted, edited, ignored or "
        "acted_on (or the Pack's own vocabulary); `memory_ids` limits it to the items it "
        "concerns.",
        route_summary="An implicit signal",
        short_help="Record an implicit signal: acted_on, accepted, edited, ignored.",
        help="Record what the user did with EPISODE_ID's memories (all, or those named).",
    ),
    Verb(
        "outcome",
        Outcome,
        (
            Arg(
                "amount",
                float,
                True,
                "The measured outcome, e.g. a P&L of -1.4.",
                ("--amount", "-a"),
            ),
        ),
        summary="a measured outcome, e.g. a P&L",
        description="A measured outcome of an episode (e.g. a P&L): the reward is "
        "tanh(amount / the Pack's outcome scale). {lessons}",
        route_summary="A measured outcome",
        short_help="Reward an episode by a measured outcome (a P&L).",
        help="Reward EPISODE_ID by a measured outcome: tanh(amount / the Pack's outcome scale).",
        lessons=True,
    ),
)


def parameters(rows: Sequence[Fixed]) -> list[inspect.Parameter]:
    """``(name, annotation, default)`` rows as a signature's parameters."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return [inspect.Parameter(n, kind, annotation=t, default=d) for n, t, d in rows]


def signed(fn: F, name: str, parameters: Sequence[inspect.Parameter], returns: Any) -> F:
    """``fn`` (which takes its arguments by keyword) named ``name``, with ``parameters``
    and ``returns`` as its signature and annotations: what the MCP SDK, FastAPI and typer
    read to build a tool, a route or a command."""
    fn.__name__ = fn.__qualname__ = name
    setattr(fn, "__signature__", inspect.Signature(parameters, return_annotation=returns))  # noqa: B010
    fn.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    return fn
