"""``wolfie ingest URL|PATH... --pack NAME``: media and documents into a Pack, with progress bars.

Documents (``.md``, ``.txt``, ``.html`` files, or folders of them) go through the
documents flow; everything else (URLs, audio and video files) through the media flow,
whose steps report progress to one bar per item. Exits 2 when any source failed (bad
input, as everywhere in ``wolfie``), after ingesting the others and printing what failed
and why. Source names and errors print literally, never as Rich markup.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from packs.errors import WolfieError
from packs.ingest.documents import KINDS as DOCUMENT_KINDS

if TYPE_CHECKING:
    from flows.ingest import MediaIngestRun

console = Console()


def register(app: typer.Typer) -> None:
    app.command(name="ingest")(ingest)


def ingest(
    sources: Annotated[
        list[str], typer.Argument(help="URLs, media files, documents, or folders of documents.")
    ],
    pack: Annotated[str, typer.Option("--pack", "-p", help="Pack name.")],
    root: Annotated[
        str | None, typer.Option(help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Whisper model folder (default tiny.en).")
    ] = None,
    language: Annotated[str, typer.Option(help="Spoken language, or 'auto'.")] = "en",
    beam_size: Annotated[int, typer.Option(min=1, max=20)] = 5,
    device: Annotated[str, typer.Option(help="cpu, cuda or auto.")] = "cpu",
    compute_type: Annotated[str, typer.Option(help="int8, float16, ...")] = "int8",
    vad: Annotated[bool, typer.Option(help="Skip silence with Silero VAD.")] = False,
    chunk_seconds: Annotated[float, typer.Option(help="Target chunk length.")] = 45.0,
    overlap_seconds: Annotated[float, typer.Option(help="Overlap between chunks.")] = 8.0,
    refresh: Annotated[bool, typer.Option(help="Download URLs again.")] = False,
    work_dir: Annotated[str | None, typer.Option(help="Scratch folder for downloads.")] = None,
    dask: Annotated[
        str | None, typer.Option(help="Dask scheduler address, or 'local' for 2 local workers.")
    ] = None,
) -> None:
    """Ingest media (transcribed, chunked by time) and documents (chunked by heading)."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")  # the summary says what failed
    missing = _missing(sources)  # fails in a second, before any flow starts
    sources = [s for s in sources if s not in missing]
    documents = [s for s in sources if _is_document(s)]
    media = [s for s in sources if s not in documents]
    failed = len(missing)
    if documents:
        failed += _ingest_documents(documents, pack, root)
    if media:
        transcribe = {
            "model": model,
            "language": None if language == "auto" else language,
            "beam_size": beam_size,
            "device": device,
            "compute_type": compute_type,
            "vad": vad,
        }
        chunking = {"target_s": chunk_seconds, "overlap_s": overlap_seconds}
        failed += _ingest_media(media, pack, root, transcribe, chunking, refresh, work_dir, dask)
    if failed:
        raise typer.Exit(2)


def _missing(sources: list[str]) -> list[str]:
    """The local paths that don't exist, each reported; the rest still run."""
    from packs.ingest.sources import check_path

    missing = []
    for source in sources:
        if "://" in source or Path(source).expanduser().exists():
            continue
        try:
            check_path(source)
        except WolfieError as exc:
            missing.append(source)
            message = Text.assemble(("FAILED ", "red"), source, "\n  ", type(exc).__name__)
            console.print(Text.assemble(message, ": ", str(exc)), soft_wrap=True)
    return missing


def _is_document(source: str) -> bool:
    if "://" in source:
        return False
    path = Path(source).expanduser()
    return path.is_dir() or path.suffix.lower() in DOCUMENT_KINDS


def _ingest_documents(paths: list[str], pack: str, root: str | None) -> int:
    from flows.documents import ingest_documents_flow

    with console.status(f"Chunking {len(paths)} document paths into Pack {pack!r}"):
        result = ingest_documents_flow(paths=paths, pack=pack, root=root, fail_on_error=False)
    table = Table(title=Text(f"Documents into Pack {pack!r}"), title_justify="left")
    for column in ("document", "chunks", "error"):
        table.add_column(column)
    for row in result.documents:
        table.add_row(
            Text(row.document), str(row.chunks), Text(row.error, style="red") if row.error else ""
        )
    console.print(table)
    console.print(f"{result.written} of {result.chunks} chunks written (others unchanged).")
    if result.stale:
        console.print(
            f"[yellow]{result.stale} stored chunks of these documents are no longer "
            "produced (the documents shrank); they were kept.[/yellow]"
        )
    return sum(1 for row in result.documents if row.error)


def _ingest_media(
    sources: list[str],
    pack: str,
    root: str | None,
    transcribe: dict[str, Any],
    chunking: dict[str, Any],
    refresh: bool,
    work_dir: str | None,
    dask: str | None,
) -> int:
    from flows.ingest import ingest_media_flow, with_dask
    from packs.ingest.progress import ProgressEvent, listening

    flow = ingest_media_flow
    if dask:
        flow = with_dask(None if dask == "local" else dask)
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[step]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        bars: dict[str, TaskID] = {
            s: progress.add_task(_short(s), total=100, step="queued")
            for s in dict.fromkeys(sources)
        }

        def show(event: ProgressEvent) -> None:
            if event.source in bars:  # "transcribe 312 of 3,600 s of audio"
                step = f"{event.step} {event.detail}".strip()
                progress.update(
                    bars[event.source], completed=100 * event.overall, step=escape(step)
                )

        with listening(show):
            result = flow(
                sources=sources,
                pack=pack,
                root=root,
                transcribe=transcribe,
                chunking=chunking,
                refresh=refresh,
                work_dir=work_dir,
                fail_on_error=False,
            )
        for row in result.items:
            done = "[red]failed[/red]" if row["status"] == "failed" else escape(row["status"])
            progress.update(bars[row["source"]], completed=100, step=done)
    console.print(_summary(result))
    _failures(result)
    return int(result.totals["failed"])


def _short(source: str, width: int = 40) -> str:
    text = source if "://" in source else Path(source).name
    return text if len(text) <= width else "..." + text[-(width - 3) :]


def _summary(result: MediaIngestRun) -> Table:
    totals = result.totals
    table = Table(
        title=f"Media into Pack {result.pack!r}: {totals['items'] - totals['failed']} of "
        f"{totals['items']} ingested, {totals['audio_s']} s of audio in {totals['wall_s']} s",
        title_justify="left",
    )
    for column in ("media", "duration", "chunks", "wall", "RTF", "status"):
        table.add_column(column, justify="left" if column in ("media", "status") else "right")
    for row in result.items:
        table.add_row(
            Text(_short(str(row["media"]), 40)),
            f"{row['duration_s']:.1f} s" if row["duration_s"] else "",
            str(row["chunks"] or ""),
            f"{row['wall_s']:.1f} s",
            f"{row['rtf']:.2f}" if row["rtf"] else "",
            Text("failed", style="red") if row["error"] else Text(row["status"]),
        )
    return table


def _failures(result: MediaIngestRun) -> None:
    for row in result.items:
        if row["error"]:
            message = Text.assemble(("FAILED ", "red"), row["source"], "\n  ", row["error"])
            console.print(message, soft_wrap=True)
