"""The architecture, read from the code (issue 13; docs/architecture.md).

Every module of packs/, wolfie/, tasks/, flows/, evals/ and deployments/ is parsed, and
the benchmark scripts (named as they import each other, from benchmarks/); imports under
``if TYPE_CHECKING:`` are type-only and left out. This is the one module of these rules:

- no module over 400 lines (benchmarks included), and ``class Pack`` at most 250,
  measured on formatted code: no ``fmt: skip`` and no ``fmt: off`` in any Python file
  (tests and benchmarks too), but one ``fmt: off`` block of generated data;
- only ``packs/store/`` imports ``lancedb``;
- ``packs/`` imports no prefect, tasks, flows or evals; ``tasks/`` imports no flows;
- ``packs/`` reads no environment at import time, and ``tasks/`` none at all (flows,
  deployments and the CLI read settings and pass values to tasks);
- every project import names a module or a name its package defines (an installed copy
  of the project could otherwise answer for a module that moved);
- no cycle of module-level imports across these packages, nor among the benchmarks.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("packs", "wolfie", "tasks", "flows", "evals", "deployments")
MAX_MODULE_LINES = 400
MAX_PACK_LINES = 250


@dataclass(frozen=True)
class Import:
    module: str  # the imported module or package, absolute
    names: tuple[str, ...]  # for ``from module import names``; () for ``import module``
    top_level: bool  # runs at import time (not inside a function)
    line: int


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """The product's modules, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


@cache
def every_module() -> dict[str, Path]:
    """The product's modules and the benchmark scripts, named from ``benchmarks/`` (where
    they run, and import each other: ``from recallbench.limit import run_limit``)."""
    bench = ROOT / "benchmarks"
    found = {module_name(p, bench): p for p in sorted(bench.rglob("*.py"))}
    return {**found, **modules()}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(
    node: ast.AST, top_level: bool, type_only: bool = False
) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child) and not type_only:
            for other in child.orelse:
                yield other, top_level
                yield from _walk(other, top_level)
            continue
        inner = top_level and not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        yield child, inner
        yield from _walk(child, inner, type_only)


@cache
def imports(name: str, type_only: bool = False) -> tuple[Import, ...]:
    """A module's imports; with ``type_only``, those under ``if TYPE_CHECKING:`` too."""
    path = every_module()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, top in _walk(ast.parse(path.read_text(encoding="utf-8")), True, type_only):
        if isinstance(node, ast.Import):
            found += [Import(a.name, (), top, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.append(Import(base, tuple(a.name for a in node.names), top, node.lineno))
    return tuple(found)


def targets(imp: Import) -> list[str]:
    """The project modules an import loads: ``from a.b import c`` is ``a.b.c`` when that
    module exists, else ``a.b``."""
    known = every_module()
    if not imp.names:
        return [imp.module] if imp.module in known else []
    out = []
    for name in imp.names:
        sub = f"{imp.module}.{name}"
        if sub in known:
            out.append(sub)
        elif imp.module in known:
            out.append(imp.module)
    return list(dict.fromkeys(out))


def root_of(module: str) -> str:
    return module.split(".")[0]


def offenders(rule) -> list[str]:
    return [
        f"{modules()[name].relative_to(ROOT)}:{imp.line} imports {imp.module}"
        for name in modules()
        for imp in imports(name)
        if rule(name, imp)
    ]


def test_no_module_is_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in every_module().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


# The one block the formatter leaves: the chat templates, one event per line (generated data).
FMT_OFF_ALLOWED = {"evals/conversation_corpus.py": 1}


def test_the_size_rules_are_kept_with_the_formatter_on():
    """No Python file of the repository (tests and benchmarks included) opts out of the
    formatter, but the one block of generated data."""
    marks: dict[str, int] = {}
    for folder in (*PACKAGES, "tests", "benchmarks", "scripts", "clients"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for token in ("fmt: skip", "fmt: off"):
                if n := path.read_text(encoding="utf-8").count("# " + token):
                    marks[f"{path.relative_to(ROOT)} {token}"] = n
    allowed = {f"{p} fmt: off": n for p, n in FMT_OFF_ALLOWED.items()}
    assert marks == allowed


def test_class_pack_is_a_small_facade():
    tree = ast.parse((ROOT / "packs" / "pack.py").read_text(encoding="utf-8"))
    (pack,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Pack"]
    assert pack.end_lineno is not None
    assert pack.end_lineno - pack.lineno + 1 <= MAX_PACK_LINES
    bases = [ast.unparse(b) for b in pack.bases]
    assert bases == [], f"Pack is built from services, not mixins: {bases}"


def test_only_the_storage_layer_imports_lancedb():
    assert (
        offenders(
            lambda name, imp: (
                root_of(imp.module) == "lancedb" and not name.startswith("packs.store.")
            )
        )
        == []
    )


def test_packs_imports_no_prefect_tasks_flows_or_evals():
    banned = {"prefect", "tasks", "flows", "evals"}
    assert (
        offenders(lambda name, imp: root_of(name) == "packs" and root_of(imp.module) in banned)
        == []
    )


def test_tasks_import_no_flows():
    assert (
        offenders(lambda name, imp: root_of(name) == "tasks" and root_of(imp.module) == "flows")
        == []
    )


def test_packs_reads_no_environment_at_import_and_tasks_none_at_all():
    """In packs/, os.environ may only be read inside functions (at open time); tasks/ never
    reads it: flows, deployments and the CLI read settings and pass values to tasks."""
    reads = []
    for name, path in modules().items():
        if root_of(name) not in ("packs", "tasks"):
            continue
        for node, top in _walk(ast.parse(path.read_text(encoding="utf-8")), True):
            at_import = top or root_of(name) == "tasks"
            if at_import and isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                reads.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert reads == []


@cache
def defined_names(package: str) -> set[str]:
    """Names a package's ``__init__`` binds (imports, assignments, functions, classes, and
    the lazy exports its ``__all__`` names)."""
    tree = ast.parse(modules()[package].read_text(encoding="utf-8"))
    names = set()
    for node, _ in _walk(tree, True):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if _is_all(node):  # lazy exports (packs/lazy.py): tests/packs/test_exported_members.py
            names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return names


def _is_all(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        and isinstance(node.value, ast.List)
    )


def test_every_project_import_resolves_in_this_checkout():
    missing = []
    for name in modules():
        for imp in imports(name):
            if root_of(imp.module) not in PACKAGES:
                continue
            if imp.module not in modules():
                missing.append(f"{name}: no module {imp.module}")
                continue
            for item in imp.names:
                sub = f"{imp.module}.{item}"
                if item != "*" and sub not in modules() and item not in defined_names(imp.module):
                    missing.append(f"{name}: {imp.module} has no {item}")
    assert missing == []


def test_no_cycle_of_module_level_imports():
    graph = {
        name: {t for imp in imports(name) if imp.top_level for t in targets(imp) if t != name}
        for name in every_module()
    }
    cycles = [sorted(c) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                found.append(component)
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [{"a", "b", "c"}]


def _folder(module: str) -> str:
    """The layer a module belongs to: its top-level package, or within ``packs`` its
    sub-package (``packs.recall``) or top-level module (``packs.pack``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "packs" and len(parts) > 1 else parts[0]


def test_layers_are_one_way_type_only_imports_included():
    """Issue 21: no two folders import each other, not even under TYPE_CHECKING: the
    folder graph (packs' sub-packages and modules, and the top-level packages) is a DAG."""
    graph: dict[str, set[str]] = {}
    for name in modules():
        for imp in imports(name, type_only=True):
            for target in targets(imp):
                a, b = _folder(name), _folder(target)
                if a != b:
                    graph.setdefault(a, set()).add(b)
    for node in graph:
        graph.setdefault(node, set())
    for targets_ in list(graph.values()):
        for target in targets_:
            graph.setdefault(target, set())
    assert [sorted(c) for c in strongly_connected(graph) if len(c) > 1] == []


def test_type_only_imports_hide_no_loop():
    """In the engine, TYPE_CHECKING guards are left only where a package's lazy exports
    are typed (``packs/lazy.py``) or where a third-party module loaded on first use is
    typed (``lazy_module``: polars stays off ``from packs import Pack``, issue 45), never
    to hold an import loop together: such a guard imports no project module. (The CLI
    keeps a few, to defer heavy imports until a command runs: ``wolfie --help`` stays
    fast.)"""
    guarded = []
    for name, path in modules().items():
        if root_of(name) != "packs":
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.If) and _type_checking(node)):
                continue
            inside = [n for stmt in node.body for n in ast.walk(stmt)]
            project = any(
                (isinstance(n, ast.ImportFrom) and root_of(n.module or "") in PACKAGES)
                or (isinstance(n, ast.Import) and any(root_of(a.name) in PACKAGES for a in n.names))
                for n in inside
            )
            if "lazy_exports" in text or ("lazy_module(" in text and not project):
                continue
            guarded.append(str(path.relative_to(ROOT)))
    assert guarded == []


def test_the_batch_system_never_imports_the_front_doors():
    """``wolfie`` (CLI, MCP) sits on top: flows, tasks, deployments and evals never
    import it."""
    assert (
        offenders(
            lambda name, imp: (
                root_of(name) in ("flows", "tasks", "deployments", "evals", "packs")
                and root_of(imp.module) == "wolfie"
            )
        )
        == []
    )


def test_the_storage_gateway_is_no_attribute_of_the_facade():
    """``Pack`` hands out no ``store``, and no code outside ``packs/`` reaches one as
    ``.store`` (tests read it through ``tests/support/storage.py``)."""
    from packs.pack import Pack

    assert not hasattr(Pack, "store")
    reached = []
    for folder in ("wolfie", "tasks", "flows", "evals", "deployments", "tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "store"
                    and not (isinstance(node.value, ast.Name) and node.value.id == "packs")
                ):
                    reached.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert reached == []


GATEWAY = "packs.store.gateway"
# Besides packs/store/ and the services below the facade, the modules that name the
# gateway: the facade (it holds the handle's one), the wiring (it hands it to each
# service it builds) and the opening (it makes the gateway a Pack is built on).
GATEWAY_HOLDERS = {"packs.pack", "packs.services", "packs.opening"}
# The benchmarks that time the engine's insides (bulk loads of synthetic rows, Phase A on
# the store, LanceDB's own table, each commit counted) reach the gateway through one seam,
# benchmarks/bench_storage.py, the only module outside packs/ that imports it. This list
# only shrinks: a benchmark that moves to public calls leaves it.
BENCH_SEAM = "bench_storage"
BENCH_SEAM_USERS = {
    "recallbench.ann",
    "recallbench.corpus",
    "recallbench.e2e",
    "recallbench.fragments",
    "recallbench.latency",
    "recallbench.limit",
    "recallbench.scale",
    "recallbench.writes",
    "rewards_bench",
    "tune_bench",
}


def _above_the_facade() -> set[str]:
    """The modules that import ``packs.pack``, directly or through others (type-only
    imports included): they take an open Pack, so they reach storage through its
    services."""
    users: dict[str, set[str]] = {}
    for name in every_module():
        for imp in imports(name, type_only=True):
            for target in targets(imp):
                users.setdefault(target, set()).add(name)
    found, todo = set(), ["packs.pack"]
    while todo:
        for user in users.pop(todo.pop(), set()) - found:
            found.add(user)
            todo.append(user)
    return found


def test_only_the_services_under_the_facade_take_the_storage_gateway():
    """Issue 43, services not a gateway: ``packs.store.gateway`` (``PackStore``) is
    imported only in ``packs/store/``, by :data:`GATEWAY_HOLDERS`, and by the services
    ``packs/services.py`` builds and their collaborators (each receives the gateway in its
    constructor). No module that takes an open Pack (one that imports ``packs.pack``:
    upkeep's callers, reports, ingest, transfer, bundles) and nothing outside ``packs/``
    (evals, benchmarks, the doors, flows, tasks) imports it: they call the Pack's
    services (``pack.upkeep``, ``pack.lessons``, ...)."""
    above = _above_the_facade() - GATEWAY_HOLDERS
    taking = sorted(
        f"{every_module()[name].relative_to(ROOT)}:{imp.line}"
        for name in every_module()
        if not name.startswith("packs.store.") and name not in {*GATEWAY_HOLDERS, BENCH_SEAM}
        for imp in imports(name, type_only=True)
        if GATEWAY in targets(imp) and (not name.startswith("packs.") or name in above)
    )
    assert taking == []


def _names_storage_of(path: Path) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == "storage_of")
        or (isinstance(node, ast.Attribute) and node.attr == "storage_of")
        or (isinstance(node, ast.alias) and node.name == "storage_of")
        or (isinstance(node, ast.FunctionDef) and node.name == "storage_of")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def test_no_code_names_storage_of_but_the_benchmarks_seam():
    """The old back door ``packs.pack.storage_of`` is gone: the product and the eval tools
    never name ``storage_of``; the benchmarks of :data:`BENCH_SEAM_USERS` take it from
    their seam (tests from ``tests/support/storage.py``), and each of them needs it."""
    naming = {name for name, path in every_module().items() if _names_storage_of(path)}
    assert naming - BENCH_SEAM_USERS == {BENCH_SEAM}, "reach storage through a Pack service"
    assert BENCH_SEAM_USERS - naming == set(), "moved: take it off BENCH_SEAM_USERS"
    import packs.pack

    assert not hasattr(packs.pack, "storage_of")


def test_every_fact_cited_lives_in_the_repository():
    """Code and docs cite the brief, field notes and learning notes as ``docs/*.md``
    (issue 33), never the team's files outside the repository; each page the docs cite
    exists."""
    outside, missing = [], set()
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if path.suffix not in (".py", ".md", ".toml", ".ts") or {".venv", "node_modules"} & {
            *parts
        }:
            continue
        text = path.read_text(encoding="utf-8") if path != Path(__file__) else ""
        for token in ("MISSION.md", "FIELD_NOTES", "LEARNING_NOTES", "../shared/"):
            if token in text:
                outside.append(f"{path.relative_to(ROOT)}: {token}")
        if parts[0] in ("docs", "README.md"):  # elsewhere docs/*.md may be sample input
            missing |= {m for m in re.findall(r"docs/[\w-]+\.md", text) if not (ROOT / m).exists()}
    assert outside == []
    assert missing == set()


MIGRATION_NAMES = {"add_columns", "ensure_table", "has_lifecycle", "has_admission"}


def test_no_migration_branch_outside_the_store():
    """Named migrations (issue 43): a writable open migrates the Pack
    (packs/store/migrate.py), the store makes the few tables a write may find missing
    and the clauses that differ on an older Pack read as it is (packs/store/lifecycle.py).
    No module outside ``packs/store`` adds columns, creates a table or asks the schema."""
    found = []
    for name, path in every_module().items():
        if name.startswith("packs.store."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute | ast.Name | ast.alias):
                word = {ast.Attribute: "attr", ast.Name: "id", ast.alias: "name"}[type(node)]
                if getattr(node, word) in MIGRATION_NAMES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {getattr(node, word)}")
    assert found == []


def test_the_migrations_are_named_once_and_in_order():
    from packs.store.migrate import MIGRATIONS

    names = [m.name for m in MIGRATIONS]
    assert all(re.fullmatch(r"m\d{3}_[a-z0-9_]+", n) for n in names), names
    assert [int(n[1:4]) for n in names] == list(range(1, len(names) + 1))  # unique, in order
    assert [m.apply.__name__ for m in MIGRATIONS] == names
