"""The explorer's pages (docs/explorer.md): Packs, Memories, one Memory, Ask, and the
actions (forget, revise, admit, supersede), each confirmed on its own page and posted
with the CSRF token. Every read and write goes through :mod:`wolfie.front_door`.

A server pinned to a scope (``wolfie api --scope``) shows and changes only what that
scope may, as its REST routes do; an unpinned server's explorer is the operator's, as
the CLI is: every memory of the Pack.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

from packs.errors import InvalidInput, WolfieError
from packs.memory_table import KINDS, SORTS, STATUSES
from packs.pack import Pack
from wolfie import front_door
from wolfie.api.errors import PackNotServed, status_of
from wolfie.ui.security import HEADERS, Csrf

ASSETS = {"explorer.css": "text/css", "explorer.js": "text/javascript"}
ACTIONS = ("forget", "revise", "admit", "supersede")
PAGE_SIZE = 50  # rows a page of the memory table shows (hand-set)
SOURCE = "ui"  # the provenance of the explorer's revisions (history's ``source``)

_env = Environment(
    loader=PackageLoader("wolfie.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


def _fmt(value: Any) -> str:
    """A number to three places, or "-" where there is none."""
    return "-" if value is None else f"{value:.3f}"


_env.globals["fmt"] = _fmt


def router(served: Any, csrf: Csrf) -> APIRouter:
    """The ``/ui`` routes over ``served`` (:class:`wolfie.api.deps.Served`)."""
    ui = APIRouter(prefix="/ui", include_in_schema=False)
    guard = served.guard

    def pack_of(name: str) -> Pack:
        if name not in served.packs:
            raise PackNotServed(f"This server does not serve a Pack named {name!r}.")
        pack: Pack = served.packs[name]
        return pack

    def reads() -> dict[str, Any]:
        pinned = guard.pinned
        return {"scope": pinned, "any_scope": pinned is None}

    def page(template: str, status: int = 200, **values: Any) -> HTMLResponse:
        body = _env.get_template(template).render(
            csrf=csrf.token, pinned=guard.pinned, packs=sorted(served.packs), **values
        )
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    def shown(template: str, build: Any) -> HTMLResponse:
        try:
            return page(template, **build())
        except WolfieError as exc:
            return page("error.html", status_of(exc), kind=type(exc).__name__, message=str(exc))

    @ui.get("")
    @ui.get("/")
    def packs() -> HTMLResponse:
        def build() -> dict[str, Any]:
            rows = []
            for name, pack in sorted(served.packs.items()):
                rows.append({"name": name, "size": pack.count(), "maturity": pack.maturity()})
            return {"rows": rows}

        return shown("packs.html", build)

    @ui.get("/static/{name}")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            return page("error.html", 404, kind="NotFound", message="No such file.")
        body = files("wolfie.ui").joinpath("static", name).read_bytes()
        return Response(body, media_type=ASSETS[name], headers=HEADERS)

    @ui.get("/p/{name}/memories")
    def memories(name: str, request: Request) -> HTMLResponse:
        q = request.query_params

        def build() -> dict[str, Any]:
            pack = pack_of(name)
            wanted: dict[str, Any] = {
                "kind": q.get("kind") or None,
                "status": q.get("status") or None,
                "text": q.get("q") or None,
                "sort": q.get("sort") or "age",
                "page": _int(q.get("page"), "page"),
                "size": PAGE_SIZE,
            }
            found = front_door.memories(pack, **reads(), **wanted)
            filters = {k: q.get(k, "") for k in ("kind", "status", "q", "sort")}
            return {
                "name": name,
                "found": found,
                "filters": filters,
                "kinds": KINDS,
                "statuses": STATUSES,
                "sorts": sorted(SORTS),
            }

        return shown("memories.html", build)

    @ui.get("/p/{name}/m/{memory_id}")
    def memory(name: str, memory_id: str) -> HTMLResponse:
        def build() -> dict[str, Any]:
            pack = pack_of(name)
            stored = front_door.get(pack, memory_id, **reads())
            history = front_door.history(pack, memory_id, **reads())
            rewards = front_door.rewards(pack, memory_id, **reads())
            return {
                "name": name,
                "m": stored,
                "history": history.versions,
                "rewards": rewards,
                "chain": _chain(pack, stored, reads()),
                "actions": ACTIONS,
            }

        return shown("memory.html", build)

    @ui.get("/p/{name}/ask")
    def ask(name: str, request: Request) -> HTMLResponse:
        question = request.query_params.get("q") or ""

        def build() -> dict[str, Any]:
            pack = pack_of(name)
            found = None
            if question.strip():  # a search: the browser logs no episode
                scope = guard(None)
                found = front_door.recall(pack, question, scope=scope, log=False, explain=True)
            return {"name": name, "question": question, "found": found}

        return shown("ask.html", build)

    @ui.get("/p/{name}/m/{memory_id}/{action}")
    def confirm(name: str, memory_id: str, action: str) -> HTMLResponse:
        def build() -> dict[str, Any]:
            if action not in ACTIONS:
                raise InvalidInput(f"No action {action!r}; the actions are {ACTIONS}.")
            stored = front_door.get(pack_of(name), memory_id, **reads())
            return {"name": name, "m": stored, "action": action}

        return shown("confirm.html", build)

    @ui.post("/p/{name}/m/{memory_id}/{action}")
    async def act(name: str, memory_id: str, action: str, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
        try:
            csrf.check(form, request.headers)
            if action not in ACTIONS:
                raise InvalidInput(f"No action {action!r}; the actions are {ACTIONS}.")
            pack = pack_of(name)
            target = _do(pack, action, memory_id, form, guard.pinned)
        except WolfieError as exc:
            return page("error.html", status_of(exc), kind=type(exc).__name__, message=str(exc))
        return RedirectResponse(f"/ui/p/{name}/{target}", status_code=303, headers=HEADERS)

    return ui


def _do(pack: Pack, action: str, memory_id: str, form: dict[str, str], pinned: str | None) -> str:
    """One action through the front door; where the browser goes next."""
    scoped: dict[str, Any] = {"scope": pinned, "any_scope": pinned is None}
    if action == "forget":
        front_door.forget(pack, [memory_id], purge=form.get("purge") == "on", pinned=pinned)
        pack.flush()
        return "memories?forgot=1"
    if action == "revise":
        fields: dict[str, Any] = {k: form.get(k) or None for k in ("intent", "response", "outcome")}
        if not any(fields.values()):
            raise InvalidInput("Give the new intent, response or outcome to revise.")
        front_door.revise(pack, memory_id, **fields, source=SOURCE, **scoped)
    elif action == "admit":
        if not front_door.admit(pack, memory_id, **scoped):
            raise InvalidInput(f"Memory {memory_id!r} is not held; there is nothing to admit.")
    elif action == "supersede":
        by = form.get("by") or None
        reason = f"{SOURCE}: {form.get('reason') or 'superseded in the explorer'}"
        front_door.supersede(pack, memory_id, by=by, reason=reason, **scoped)
    pack.flush()
    return f"m/{memory_id}"


def _chain(pack: Pack, stored: Any, scoped: dict[str, Any]) -> list[Any]:
    """The memories that replaced this one, in order (at most 20)."""
    chain: list[Any] = []
    current = stored
    while current.superseded_by and len(chain) < 20:
        try:
            current = front_door.get(pack, current.superseded_by, **scoped)
        except WolfieError:
            break
        chain.append(current)
    return chain


def _int(text: str | None, name: str) -> int:
    if not text:
        return 1
    if not text.isdigit():
        raise InvalidInput(f"{name} must be a whole number, not {text!r}.")
    return int(text)
