"""Architecture rules that a test can hold: packs/ never imports Prefect."""

import ast
from pathlib import Path

PACKS = Path(__file__).resolve().parents[2] / "packs"


def test_packs_has_no_prefect_import():
    offenders = []
    for path in PACKS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "prefect"]
    assert offenders == []


def test_packs_reads_no_environment_at_import():
    """os.environ may only be read inside functions (at open time), never at module level."""
    for path in PACKS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                continue
            reads = [
                n
                for n in ast.walk(node)
                if (isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv"))
            ]
            assert reads == [], f"{path.name} reads the environment at import"
