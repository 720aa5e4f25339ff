"""``wolfie eval``, ``wolfie eval-runs`` and ``wolfie learn-bench``.

- ``eval`` runs the eval flow: an eval set against a Pack pinned to one version, results
  stored in the Pack's ``eval_runs`` table and published as Prefect artifacts. It never
  creates a Pack (except with ``--load``, which builds one on purpose): a missing Pack
  exits 2.
- ``eval-runs`` prints the stored results of past runs (the trend over time).
- ``learn-bench`` runs the runtime-learning benchmark (``evals/learning_bench.py``) and
  prints the methods side by side.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evals.evalset import load_eval_set
from packs.errors import InvalidInput, WolfieError

console = Console()

EVAL_SET_FORMAT = """
Eval-set format (JSONL, one JSON object per line):

\b
  {"id": "cp-preserve", "query": "copy a file and keep its timestamps",
   "relevant": ["man/cp.1#16"], "reference_contexts": ["..."],
   "split": "train", "metadata": {}}

"query" is required; "relevant" (a list of ids, or {"id": grade} with grades >= 1)
and/or "reference_contexts" (texts) say what a good answer retrieves. An id is a
knowledge chunk's "source#position" or a stored row id (k_..., m_...). "id" (unique,
default line-N), "split" (train or heldout) and "metadata" are optional; unknown keys
are refused with the line number. See evals/evalset.py.
"""

PackOpt = Annotated[str, typer.Option("--pack", "-p", help="Pack name (must exist).")]
RootOpt = Annotated[
    str | None,
    typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
]


def register(app: typer.Typer) -> None:
    app.command(name="eval", epilog=EVAL_SET_FORMAT)(eval_command)
    app.command(name="eval-runs", epilog=EVAL_SET_FORMAT)(eval_runs_command)
    app.command(name="learn-bench")(learn_bench_command)


def eval_command(
    pack: PackOpt,
    root: RootOpt = None,
    eval_set: Annotated[
        str | None,
        typer.Option(
            help="A JSONL eval-set file, or the name of a set stored with the Pack "
            "(default: the Pack's stored set)."
        ),
    ] = None,
    store: Annotated[
        bool,
        typer.Option(
            help="Store the --eval-set file with the Pack (under the file's name), so "
            "scheduled evals use it."
        ),
    ] = False,
    load: Annotated[
        Path | None,
        typer.Option(
            help="Add this bundle folder to the Pack first (creates the Pack; its "
            "eval_set.jsonl or queries.jsonl is stored with it)."
        ),
    ] = None,
    k: Annotated[list[int] | None, typer.Option("--k", help="Cutoffs (repeat).")] = None,
    version: Annotated[
        int | None, typer.Option(help="memories table version (default: the latest).")
    ] = None,
    ragas: Annotated[bool, typer.Option(help="Also ragas' non-LLM context metrics.")] = True,
) -> None:
    """Score an eval set against a Pack; store the results in its eval_runs table."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    from flows.evaluation import eval_flow

    try:
        if load is None:
            _require_pack(pack, root)
        if store:
            eval_set = _store_eval_set(pack, root, eval_set, load is not None)
        with console.status("Scoring the eval set (Prefect engine, embedded)"):
            result = eval_flow(
                pack=pack, root=root, eval_set=eval_set, ks=tuple(k or (1, 3, 5, 10)),
                version=version, load=str(load) if load else None, ragas=ragas,
            )  # fmt: skip
    except WolfieError as exc:
        _fail(exc)
    table = Table(
        title=escape(
            f"Pack {pack!r} v{result['pack_version']} × {result['dataset']} "
            f"({result['queries']} queries), run {result['run_id'][:8]}"
        ),
        title_justify="left",
    )
    for column in ("metric", "k", "value", "queries"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for r in result["results"]:
        k_text = "" if r["k"] is None else str(r["k"])
        table.add_row(r["metric"], k_text, f"{r['value']:.3f}", str(r["queries"]))
    console.print(table)
    console.print(f"Missed queries (nothing relevant retrieved): {len(result['misses'])}")


def eval_runs_command(
    pack: PackOpt,
    root: RootOpt = None,
    metric: Annotated[str, typer.Option(help="Metric to follow.")] = "recall",
    k: Annotated[int | None, typer.Option(help="Its cutoff (none for k-less metrics).")] = 3,
) -> None:
    """Print one metric over the Pack's stored eval runs, oldest first."""
    from evals.eval_runs import read_eval_runs, trend
    from packs.pack import Pack

    try:
        with Pack.open(pack, root, read_only=True) as handle:
            rows = trend(read_eval_runs(handle), metric, k)
    except WolfieError as exc:
        _fail(exc)
    title = escape(f"{metric}@{k} over eval runs of Pack {pack!r}")
    table = Table(title=title, title_justify="left")
    for column in ("at", "run", "dataset", "pack version", "value"):
        table.add_column(column)
    for row in rows.iter_rows(named=True):
        table.add_row(
            str(row["at"])[:19], row["run_id"][:8], escape(row["dataset"]),
            str(row["pack_version"]), f"{row['value']:.3f}",
        )  # fmt: skip
    console.print(
        table if rows.height else escape(f"No {metric}@{k} results stored in {pack!r} yet.")
    )


def _require_pack(pack: str, root: str | None) -> None:
    """Raise PackNotFound for a missing Pack (opening read-only never creates one)."""
    from packs.pack import Pack

    with Pack.open(pack, root, read_only=True):
        pass


def _store_eval_set(pack: str, root: str | None, eval_set: str | None, create: bool) -> str:
    """Store the ``--eval-set`` file with the Pack; returns the name it is stored under."""
    from packs.pack import Pack
    from packs.store.eval_sets import store_eval_set

    if eval_set is None or not Path(eval_set).is_file():
        raise InvalidInput(f"--store needs --eval-set FILE (a JSONL file); got {eval_set!r}.")
    path = Path(eval_set)
    load_eval_set(path)  # refuse a malformed set before it is stored
    with Pack.open(pack, root, create=create) as handle:
        store_eval_set(handle, path.stem, path.read_text(encoding="utf-8"), str(path))
    console.print(f"Stored eval set {path.stem!r} with Pack {pack!r}.")
    return path.stem


def _fail(exc: WolfieError) -> NoReturn:
    Console(stderr=True).print(
        f"[red]Error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True
    )
    # SystemExit, not typer.Exit: the console entry point runs the app with
    # standalone_mode=False, which returns typer.Exit's code instead of exiting with it.
    raise SystemExit(2) from exc


def learn_bench_command(
    corpus: Annotated[Path | None, typer.Option(help="Bundle folder (knowledge.jsonl).")] = None,
    eval_set: Annotated[Path | None, typer.Option(help="JSONL eval set with ids.")] = None,
    out: Annotated[Path, typer.Option(help="Where reports go.")] = Path("out/learn-bench"),
    cache: Annotated[
        Path | None, typer.Option(help="Built base Packs (default: <out>/cache).")
    ] = None,
    epochs: Annotated[int, typer.Option(min=1, max=50)] = 5,
    method: Annotated[
        list[str] | None,
        typer.Option(
            help="Methods, baseline first (repeat): similarity, utility, utility-item, "
            "contextual, contextual-item, no-feedback (evals/learning.py). Default: "
            "similarity, utility (global Q, plain MemRL), contextual."
        ),
    ] = None,
    k1: Annotated[int | None, typer.Option(help="Phase A candidates.")] = None,
    k2: Annotated[int | None, typer.Option(help="Items injected per query.")] = None,
    alpha: Annotated[float | None, typer.Option(help="Utility learning rate.")] = None,
    lam: Annotated[float | None, typer.Option(help="λ of learning methods.")] = None,
    explore_bonus: Annotated[float | None, typer.Option(help="Exploration bonus.")] = None,
    context_theta: Annotated[float | None, typer.Option(help="Contextual kernel θ.")] = None,
    context_kappa: Annotated[float | None, typer.Option(help="Contextual shrinkage κ.")] = None,
    context_prior: Annotated[
        str | None, typer.Option(help="Contextual prior: never-helped, negative, global.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Query order and split seed.")] = 0,
    sweep: Annotated[bool, typer.Option(help="Also sweep α, λ, k1, k2 and the bonus.")] = False,
) -> None:
    """Runtime learning: similarity-only against utility-ranked retrieval, side by side."""
    from evals import learning_bench as bench
    from evals.learning_report import pct, points, render_sweep, write_outputs

    config = bench.BenchConfig(
        corpus=corpus or bench.DEFAULT_CORPUS,
        eval_set=eval_set or (corpus / "queries.jsonl" if corpus else bench.DEFAULT_EVAL_SET),
        out=out, cache=cache, epochs=epochs, methods=tuple(method or bench.BenchConfig.methods),
        settings=bench.shared_settings(
            k1=k1, k2=k2, alpha=alpha, lam=lam, explore_bonus=explore_bonus,
            context_theta=context_theta, context_kappa=context_kappa,
            context_prior=context_prior,
        ),
        seed=seed,
    )  # fmt: skip
    with console.status("Building the Pack (cached per corpus) and playing the episodes"):
        result = bench.run_bench(config)
        rows = bench.sweep(config) if sweep else []
    table = Table(title="Success rate (relevant item in the top-k2)", title_justify="left")
    table.add_column("method")
    for e in range(1, epochs + 1):
        table.add_column(f"ep {e}", justify="right")
    for column in ("last epoch", "cumulative", "held-out"):
        table.add_column(column, justify="right")
    base = result.runs[0]
    for run in result.runs:
        table.add_row(
            run.method, *(pct(r) for r in run.train_by_epoch), pct(run.last_train),
            pct(run.cumulative), pct(run.heldout),
        )  # fmt: skip
    for run in result.runs[1:]:
        table.add_row(
            f"{run.method} − {base.method}",
            *(points(a - b) for a, b in zip(run.train_by_epoch, base.train_by_epoch, strict=True)),
            points(run.last_train - base.last_train), points(run.cumulative - base.cumulative),
            points(run.heldout - base.heldout),
        )  # fmt: skip
    console.print(table)
    console.print(
        f"{result.train} training and {result.heldout} held-out queries, {result.chunks} "
        f"chunks, {epochs} epochs, {result.seconds:.0f} s."
    )
    if rows:
        console.print(render_sweep(rows))
    for path in write_outputs(result, config, rows):
        console.print(f"Wrote {path}")
