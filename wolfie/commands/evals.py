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
    from evals.pack_eval import DEFAULT_KS
    from flows.evaluation import eval_flow

    try:
        if load is None:
            _require_pack(pack, root)
        if store:
            eval_set = _store_eval_set(pack, root, eval_set, load is not None)
        with console.status("Scoring the eval set (Prefect engine, embedded)"):
            result = eval_flow(
                pack=pack,
                root=root,
                eval_set=eval_set,
                ks=tuple(k or DEFAULT_KS),
                version=version,
                load=str(load) if load else None,
                ragas=ragas,
            )
    except WolfieError as exc:
        _fail(exc)
    scored = result.scored
    table = Table(
        title=escape(
            f"Pack {pack!r} v{scored.pack_version} × {scored.dataset} "
            f"({scored.queries} queries), run {result.run_id[:8]}"
        ),
        title_justify="left",
    )
    for column in ("metric", "k", "value", "queries"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for r in scored.results:
        k_text = "" if r.k is None else str(r.k)
        table.add_row(r.metric, k_text, f"{r.value:.3f}", str(r.queries))
    console.print(table)
    console.print(f"Missed queries (nothing relevant retrieved): {len(scored.misses)}")


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
            str(row["at"])[:19],
            row["run_id"][:8],
            escape(row["dataset"]),
            str(row["pack_version"]),
            f"{row['value']:.3f}",
        )
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
    from evals.evalset import load_eval_set
    from packs.pack import Pack

    if eval_set is None or not Path(eval_set).is_file():
        raise InvalidInput(f"--store needs --eval-set FILE (a JSONL file); got {eval_set!r}.")
    path = Path(eval_set)
    load_eval_set(path)  # refuse a malformed set before it is stored
    with Pack.open(pack, root, create=create) as handle:
        handle.eval_sets.save(path.stem, path.read_text(encoding="utf-8"), str(path))
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
    eval_set: Annotated[
        Path | None, typer.Option(help="JSONL eval set with ids (default: <corpus>/queries.jsonl).")
    ] = None,
    paraphrases: Annotated[
        Path | None, typer.Option(help="Paraphrase set (default: <corpus>/paraphrases.jsonl).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Where reports go.")] = Path("out/learn-bench"),
    cache: Annotated[
        Path | None, typer.Option(help="Built base Packs (default: <out>/cache).")
    ] = None,
    epochs: Annotated[int, typer.Option(min=1, max=50)] = 5,
    seeds: Annotated[
        str, typer.Option(help="Seeds of query order and reward plan, e.g. '0,1,2' or '0 1 2'.")
    ] = "0,1,2",
    split: Annotated[
        str, typer.Option(help="Fold: validation (tune), test (report) or all.")
    ] = "test",
    method: Annotated[
        list[str] | None,
        typer.Option(
            help="Methods (repeat): similarity, utility (plain MemRL), contextual (issue 8, "
            "pinned), default (the Pack defaults at run time), their -item variants, and "
            "issue 41's episode-credit (the defaults before it), slate-credit, reserve-only, "
            "credit-only (evals/learning.py). The no-feedback baseline always runs. Default: "
            "similarity, utility, contextual, default."
        ),
    ] = None,
    flip: Annotated[float, typer.Option(help="Share of given rewards flipped.")] = 0.0,
    sparse: Annotated[float, typer.Option(help="Share of episodes rewarded.")] = 1.0,
    credit: Annotated[str, typer.Option(help="episode (feedback) or item (signal).")] = "episode",
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
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Any Pack setting as KEY=VALUE (repeat), for every method."),
    ] = None,
) -> None:
    """Runtime learning: train, paraphrase and held-out success per method, over seeds."""
    from evals import learning_bench as bench
    from evals.feedback_models import FeedbackModel
    from evals.learning_config import BenchConfig
    from evals.learning_report import render_markdown, write_outputs

    try:
        seed_list = tuple(int(s) for s in seeds.replace(",", " ").split())
        if not seed_list:
            raise ValueError(seeds)
    except ValueError:
        _fail(InvalidInput(f"--seeds must list integers, e.g. '0,1,2'; got {seeds!r}."))
    if corpus is None and not bench.DEFAULT_CORPUS.is_dir():  # an installed wheel
        _fail(
            InvalidInput(
                f"No corpus at {bench.DEFAULT_CORPUS}: the learning benchmark's corpora ship with "
                "the source repository (data/evals), not the package; pass --corpus FOLDER."
            )
        )
    try:
        config = BenchConfig(
            corpus=corpus or bench.DEFAULT_CORPUS,
            eval_set=eval_set,
            paraphrases=paraphrases,
            out=out,
            cache=cache,
            epochs=epochs,
            seeds=seed_list,
            methods=tuple(method or BenchConfig.methods),
            split=split,
            feedback=FeedbackModel(flip=flip, sparse=sparse, credit=credit),
            settings=bench.shared_settings(
                set_ or [],
                k1=k1,
                k2=k2,
                alpha=alpha,
                lam=lam,
                explore_bonus=explore_bonus,
                context_theta=context_theta,
                context_kappa=context_kappa,
                context_prior=context_prior,
            ),
        )
        with console.status("Building the Pack (cached per corpus) and playing the episodes"):
            result = bench.run_bench(config)
    except WolfieError as exc:
        _fail(exc)
    console.print(render_markdown(result, config), markup=False, highlight=False)
    for path in write_outputs(result, config):
        console.print(f"Wrote {path}", markup=False, highlight=False)
