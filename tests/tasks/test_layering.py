"""Layering rules of the Prefect half (issue 13), held by reading the code.

Tasks never import flows and read no environment; no module of the Prefect layer, the
evals or the benchmarks passes 400 lines; their module-level imports form no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYER = ("tasks", "flows", "evals", "deployments", "benchmarks")
MAX_LINES = 400


def modules(*packages: str) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported(path: Path, *, module_level_only: bool) -> set[str]:
    """Modules ``path`` imports (``from a import b`` yields ``a`` and ``a.b``); with
    ``module_level_only``, imports inside functions and ``if TYPE_CHECKING:`` are left out."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if module_level_only and (
                isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            ):
                continue
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                names.add(child.module)
                names.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return names


def test_tasks_never_import_flows():
    offenders = [
        f"{name} imports {target}"
        for name, path in modules("tasks").items()
        for target in imported(path, module_level_only=False)
        if target.split(".")[0] == "flows"
    ]
    assert offenders == []


def test_tasks_read_no_environment():
    """Flows, deployments and the CLI read settings and pass values to tasks."""
    for name, path in modules("tasks").items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        reads = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv")
        ]
        assert reads == [], f"{name} reads the environment"


def test_no_module_of_the_layer_over_400_lines():
    long = {
        name: lines
        for name, path in modules(*LAYER).items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_import_cycle_at_module_level():
    graph = {
        name: {t for t in imported(path, module_level_only=True) if t in found and t != name}
        for found in [modules(*LAYER)]
        for name, path in found.items()
    }
    cycles = [cycle for start in graph if (cycle := _cycle_from(start, graph))]
    assert cycles == []


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A path of imports from ``start`` back to itself, if there is one (depth first)."""
    stack, seen = [(start, [start])], set()
    while stack:
        name, path = stack.pop()
        for target in graph[name]:
            if target == start:
                return [*path, start]
            if target not in seen:
                seen.add(target)
                stack.append((target, [*path, target]))
    return None
