"""``wolfie lessons score``: rate a lesson writer against hand-written references.

The writers: ``template`` (built in), ``response`` (the recorded response as the lesson:
a floor), ``openai`` (an OpenAI-compatible endpoint: a local Ollama or llama.cpp server,
or a hosted model; ``--base-url``/``--model`` or ``WOLFIE_LLM_*``), and ``sampling`` (a
client's model: the command serves MCP on stdio and the client calls ``score_lessons``).
The metric needs no LLM (``evals/lesson_scores.py``, docs/lessons.md).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from packs.errors import InvalidInput
from wolfie.commands.options import JsonArg

console = Console()
WRITERS = ("template", "response", "openai", "sampling")


def register(app: typer.Typer) -> None:
    lessons = typer.Typer(
        no_args_is_help=True, help="Lessons: rate a writer against hand-written references."
    )
    lessons.command(name="score", short_help="Rate a lesson writer against reference lessons.")(
        score
    )
    app.add_typer(lessons, name="lessons", short_help="Rate lesson writers.")


def score(
    writer: Annotated[
        str, typer.Option(help="template, response (the floor), openai or sampling.")
    ] = "template",
    episodes: Annotated[
        Path | None, typer.Option(help="Reference episodes (default: the shipped set).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="openai: the endpoint (WOLFIE_LLM_BASE_URL).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="openai: the model (WOLFIE_LLM_MODEL).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Score only the first N.")] = None,
    out: Annotated[Path, typer.Option(help="Where the report goes.")] = Path("out/lessons"),
    as_json: JsonArg = False,
) -> None:
    """Have WRITER write a lesson for each reference episode and score them: ROUGE-L F1
    where the do/avoid stance agrees with the reference (else 0), embedding cosine, and
    stance agreement. The OpenAI key comes from WOLFIE_LLM_API_KEY only."""
    from evals.lesson_scores import (
        DEFAULT_EPISODES,
        ResponseAsLesson,
        load_episodes,
        save,
        score_writer,
        write_lessons,
    )
    from packs.lessons.writers import LessonWriter, OpenAIChatLessonWriter, TemplateLessonWriter

    if writer not in WRITERS:
        raise InvalidInput(f"--writer must be one of {', '.join(WRITERS)}, not {writer!r}.")
    chosen = load_episodes(episodes or DEFAULT_EPISODES)[:limit]
    if writer == "sampling":
        from wolfie.mcp.score_lessons import build_score_server

        build_score_server(chosen, out).run("stdio")
        return
    named = None
    made: LessonWriter
    if writer == "openai":
        url = base_url or os.environ.get("WOLFIE_LLM_BASE_URL")
        named = model or os.environ.get("WOLFIE_LLM_MODEL")
        if not url or not named:
            raise InvalidInput("--writer openai needs --base-url and --model (or WOLFIE_LLM_*).")
        made = OpenAIChatLessonWriter(url, named, os.environ.get("WOLFIE_LLM_API_KEY"))
    else:
        made = TemplateLessonWriter() if writer == "template" else ResponseAsLesson()
    lessons, failures = write_lessons(made.write, chosen)
    result = score_writer(writer, chosen, lessons, failures, model=named)
    paths = save(result, out)
    if as_json:
        from evals.lesson_scores import summary

        sys.stdout.write(json.dumps(summary(result), allow_nan=False) + "\n")
        return
    table = Table(title=Text(f"Lesson writer {writer}"), title_justify="left")
    for column in ("score", "ROUGE-L", "cosine", "stance", "written"):
        table.add_column(column, justify="right")
    table.add_row(
        f"{result.score:.3f}",
        f"{result.rouge_l:.3f}",
        f"{result.cosine:.3f}",
        f"{result.stance_agreement:.3f}",
        f"{result.written}/{result.episodes}",
    )
    console.print(table)
    console.print(Text(f"Report: {paths[1]}"))
