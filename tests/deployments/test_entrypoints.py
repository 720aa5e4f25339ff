"""Every entrypoint of ``deployments/prefect.yaml`` loads the way Prefect's runner and
workers load it: as a script, in a fresh interpreter, with the script's folder first on
the import path. Fast: no server."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deployments.serve import REPO, check_entrypoints, load_entries, load_flow

ENTRYPOINTS = sorted({entry["entrypoint"] for entry in load_entries()})


def top_level_packages(repo: Path) -> set[str]:
    """Folders with an ``__init__.py`` and ``.py`` modules directly under the repo."""
    packages = {p.parent.name for p in repo.glob("*/__init__.py")}
    return packages | {p.stem for p in repo.glob("*.py")}


@pytest.mark.parametrize("entrypoint", ENTRYPOINTS)
def test_entrypoint_loads_as_the_runner_loads_it(entrypoint):
    """Bug: ``flows/evals.py`` shadowed the ``evals`` package for every script in
    ``flows/``, so every scheduled deployment Crashed with "'evals' is not a package"."""
    code = textwrap.dedent(f"""
        from prefect.flows import Flow
        from prefect.utilities.importtools import import_object
        loaded = import_object({entrypoint!r})
        assert isinstance(loaded, Flow), type(loaded)
    """)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_no_entrypoint_module_shadows_a_top_level_package():
    """Bug: a module in an entrypoint folder named like a package of the repo (flows/evals.py
    vs evals/) hides that package from every flow in the folder when run as deployed."""
    packages = top_level_packages(REPO)
    assert {"evals", "packs", "tasks", "flows"} <= packages
    folders = {(REPO / e.partition(":")[0]).parent for e in ENTRYPOINTS}
    clashes = sorted(
        f"{module.relative_to(REPO)}"
        for folder in folders
        for module in folder.glob("*.py")
        if module.stem in packages
    )
    assert clashes == []


def test_no_entrypoint_module_shadows_an_installed_or_standard_module():
    """The same trap with a library: a ``flows/mcp.py`` would hide the ``mcp`` package
    (and ``flows/json.py`` the standard library's) from every flow in the folder."""
    folders = {(REPO / e.partition(":")[0]).parent for e in ENTRYPOINTS}
    names = {m.stem for folder in folders for m in folder.glob("*.py")} - {"__init__"}
    assert "learning" in names
    clashes = sorted(
        n for n in names if n in sys.stdlib_module_names or importlib.util.find_spec(n)
    )
    assert clashes == []


def write_shadowing_project(tmp: Path) -> Path:
    """A tiny project whose flow script sits next to a module named like a package."""
    (tmp / "probe_wolfie_pkg").mkdir()
    (tmp / "probe_wolfie_pkg" / "__init__.py").write_text("")
    (tmp / "probe_wolfie_pkg" / "sub.py").write_text("VALUE = 1\n")
    (tmp / "probe_flows").mkdir()
    (tmp / "probe_flows" / "__init__.py").write_text("")
    (tmp / "probe_flows" / "probe_wolfie_pkg.py").write_text("VALUE = 2\n")
    (tmp / "probe_flows" / "job.py").write_text(
        "from prefect import flow\nfrom probe_wolfie_pkg.sub import VALUE\n\n"
        "@flow\ndef job() -> int:\n    return VALUE\n"
    )
    yaml_path = tmp / "prefect.yaml"
    yaml_path.write_text("deployments:\n  - name: job\n    entrypoint: probe_flows/job.py:job\n")
    return yaml_path


def test_serve_check_sees_a_shadowed_package(tmp_path, monkeypatch):
    """Bug: ``wolfie serve --check`` imported dotted module names (``flows.learning``) in
    its own process, where the real package was already imported; that hides shadowing,
    so it passed while every deployed run Crashed."""
    yaml_path = write_shadowing_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # the dotted import would now succeed
    importlib.import_module("probe_wolfie_pkg.sub")  # as `evals` is in wolfie's process
    assert load_flow("probe_flows/job.py:job").name == "job"  # in-process: masked
    failures = check_entrypoints(yaml_path, tmp_path)
    assert [f.deployment for f in failures] == ["job"]
    assert "probe_wolfie_pkg" in failures[0].error and "not a package" in failures[0].error


def test_wolfie_serve_check_exits_2_when_an_entrypoint_fails(tmp_path, monkeypatch):
    """Bug: ``wolfie serve --check`` exited 0 although a deployment could not load."""
    from wolfie.cli import app

    yaml_path = write_shadowing_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["serve", "--check", "--prefect-file", str(yaml_path)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 2, result.output
    assert "job" in result.output and "would crash" in result.output


def test_wolfie_serve_check_lists_every_deployment():
    from wolfie.cli import app

    result = CliRunner().invoke(app, ["serve", "--check"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for entry in load_entries():
        assert entry["name"] in result.output
