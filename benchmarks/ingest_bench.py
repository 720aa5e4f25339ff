"""Ingestion benchmark: the checkpointed pipeline against bare faster-whisper, same audio.

How to run (from the repo root, with the venv active)::

    python benchmarks/ingest_bench.py                        # 5 min of speech, 3 repeats
    python benchmarks/ingest_bench.py --minutes 3 --repeats 2 --long-minutes 0   # smoke
    python benchmarks/ingest_bench.py --long-minutes 60      # + peak RSS on one hour

It prints a Markdown table and writes ``out/bench/ingest.json`` and ``out/bench/ingest.md``.

The audio is real read speech: the five LibriVox utterances of Debian's
``pocketsphinx-testdata`` (24.7 s, with reference transcripts) repeated with 0.5 s gaps
to the length asked for, encoded as a 32 kbit/s mono MP3. Three paths run interleaved in
one process, ``--repeats`` times each, every run on a fresh Pack root so nothing is
reused: *bare* is ``WhisperModel.transcribe`` on the file (segments consumed, nothing
stored); *steps* are the four library steps (fetch, transcribe, chunk, upsert) into a
local Pack; *flow* is the Prefect flow on the embedded engine, started beforehand. The
model and the embedder are loaded before timing, and shared. The WER of bare tiny.en on
the five utterances is printed too.

Peak RSS (``--long-minutes``) is measured in child processes, one per path (*steps* and
*bare*), each sampling its own RSS every 50 ms while the path runs; each also reports
its RSS after loading its models, so the growth during transcription is shown apart
from the libraries' footprint.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import Any

OUT = Path("out/bench")
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
# An assumption, not a quote: AWS c7i.large (2 vCPU, 4 GiB), on-demand Linux, us-east-1
# list price. Check the current price for your region and instance.
PRICE_PER_HOUR = 0.08925
PRICE_NOTE = "AWS c7i.large (2 vCPU, 4 GiB) on-demand, us-east-1: $0.08925/h (assumed)"


def utterances() -> list[tuple[Path, str]]:
    refs = {}
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        text, _, name = line.rpartition("(")
        refs[name.strip(") ")] = text.replace("<s>", "").replace("</s>", "").strip()
    return [(LIBRIVOX / f"{name}.wav", text) for name, text in sorted(refs.items())]


def make_audio(minutes: float, dest: Path) -> float:
    """LibriVox speech repeated to ``minutes``, as MP3; returns its length in seconds."""
    frames, rate, total = [], 16_000, 0.0
    gap = b"\x00\x00" * (rate // 2)
    while total < minutes * 60:
        for path, _ in utterances():
            with wave.open(str(path)) as clip:
                rate = clip.getframerate()
                data = clip.readframes(clip.getnframes())
            frames += [data, gap]
            total += len(data) / 2 / rate + 0.5
    raw = dest.with_suffix(".wav")
    with wave.open(str(raw), "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(rate)
        out.writeframes(b"".join(frames))
    subprocess.run(
        [
            "ffmpeg",
            "-loglevel",
            "error",
            "-y",
            "-i",
            str(raw),
            "-ac",
            "1",
            "-ar",
            "16000",
            "-b:a",
            "32k",
            str(dest),
        ],
        check=True,
    )
    raw.unlink()
    return total


class Clock:
    """Wall seconds and this process's CPU seconds (all threads) since it started."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> dict[str, float]:
        return {"wall_s": time.perf_counter() - self.wall, "cpu_s": time.process_time() - self.cpu}


def run_bare(audio: Path) -> dict[str, Any]:
    from packs.ingest.transcribe import TranscribeOptions, load_model

    options = TranscribeOptions()
    model = load_model(options)
    clock = Clock()
    segments, info = model.transcribe(str(audio), beam_size=options.beam_size, language="en")
    count = sum(1 for _ in segments)
    return clock.read() | {"segments": count, "audio_s": info.duration}


def run_steps(audio: Path, root: Path) -> dict[str, Any]:
    from packs.ingest import (
        ChunkingOptions,
        IngestTarget,
        TranscribeOptions,
        chunk_step,
        fetch_step,
        transcribe_step,
        upsert_step,
    )

    target, work = IngestTarget("bench", str(root)), root / "work"
    clock = Clock()
    media_id = fetch_step(target, str(audio), work).media_id
    heard = transcribe_step(target, media_id, TranscribeOptions(), work)
    chunked = chunk_step(target, media_id, heard.info["fingerprint"], ChunkingOptions())
    stored = upsert_step(target, media_id, chunked.info["key"])
    return clock.read() | {
        "segments": heard.info["segments"],
        "chunks": stored.info["chunks"],
        "audio_s": heard.info["duration_s"],
    }


def run_flow(audio: Path, root: Path) -> dict[str, Any]:
    from flows.ingest import ingest_media_flow

    clock = Clock()
    result = ingest_media_flow(sources=[str(audio)], pack="bench", root=str(root))
    row = result.items[0]
    return clock.read() | {"chunks": row["chunks"], "audio_s": row["duration_s"]}


def warm_up(clip: Path) -> None:
    """Load the model and embedder, start Prefect's embedded server: none of it is timed."""
    from packs.embeddings import default_embedder

    default_embedder().embed(["warm up"])
    run_bare(clip)
    with tempfile.TemporaryDirectory() as root:
        run_flow(clip, Path(root))


def wer_librivox() -> float:
    from evals.transcript_metrics import word_error_rate
    from packs.ingest.transcribe import TranscribeOptions, load_model

    model = load_model(TranscribeOptions())
    refs, hyps = [], []
    for path, text in utterances():
        segments, _ = model.transcribe(str(path), beam_size=5, language="en")
        refs.append(text)
        hyps.append(" ".join(s.text for s in segments))
    return word_error_rate(refs, hyps)


def side_by_side(audio: Path, repeats: int) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {"bare": [], "steps": [], "flow": []}
    for repeat in range(repeats):
        for path in runs:
            with tempfile.TemporaryDirectory() as root:
                if path == "bare":
                    result = run_bare(audio)
                elif path == "steps":
                    result = run_steps(audio, Path(root))
                else:
                    result = run_flow(audio, Path(root))
            runs[path].append(result)
            print(
                f"  repeat {repeat + 1}/{repeats} {path:5s} {result['wall_s']:7.1f} s wall "
                f"{result['cpu_s']:7.1f} s CPU",
                flush=True,
            )
    return runs


def peak_rss(path: str, audio: Path) -> dict[str, Any]:
    """Run one path in a child process that samples its own RSS while the path runs.

    (``wait4``'s ``ru_maxrss`` is no use here: a child inherits it from this process at
    fork, and this process holds the models already.)
    """
    with tempfile.TemporaryDirectory() as root:
        report = Path(root) / "report.json"
        cmd = [
            sys.executable,
            __file__,
            "--child",
            path,
            "--audio",
            str(audio),
            "--root",
            root,
            "--report",
            str(report),
        ]
        subprocess.run(cmd, env=os.environ | {"PREFECT_LOGGING_LEVEL": "WARNING"}, check=True)
        return dict(json.loads(report.read_text()))


def rss_mib() -> float:
    """This process's resident set size now (Linux ``/proc/self/statm``)."""
    resident = int(Path("/proc/self/statm").read_text().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(path: str, audio: Path, root: Path, report: Path) -> None:
    import threading

    from packs.ingest.transcribe import TranscribeOptions, load_model

    load_model(TranscribeOptions())
    if path == "steps":
        from packs.embeddings import default_embedder

        default_embedder().embed(["load"])
    loaded = rss_mib()
    peak, done = [loaded], threading.Event()

    def sample() -> None:  # every 50 ms while the path runs
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    result = run_bare(audio) if path == "bare" else run_steps(audio, root)
    done.set()
    sampler.join()
    report.write_text(
        json.dumps(
            result
            | {
                "rss_after_load_mib": round(loaded, 1),
                "peak_run_mib": round(max(peak[0], rss_mib()), 1),
            }
        )
    )


def summarise(runs: dict[str, list[dict[str, Any]]], audio_s: float) -> dict[str, Any]:
    """Medians per path; ratios to bare on wall time and on CPU time.

    On a shared machine wall time swings with other jobs' load; CPU time barely does, so
    the CPU ratio is the steadier comparison. Cost: the instance price times the wall
    time as measured (pessimistic here), and times CPU seconds / 2 (both vCPUs busy).
    """
    bare_wall = statistics.median(r["wall_s"] for r in runs["bare"])
    bare_cpu = statistics.median(r["cpu_s"] for r in runs["bare"])
    out: dict[str, Any] = {}
    for path, results in runs.items():
        wall = statistics.median(r["wall_s"] for r in results)
        cpu = statistics.median(r["cpu_s"] for r in results)
        out[path] = {
            "median_wall_s": round(wall, 2),
            "median_cpu_s": round(cpu, 2),
            "runs_wall_s": [round(r["wall_s"], 2) for r in results],
            "runs_cpu_s": [round(r["cpu_s"], 2) for r in results],
            "wall_ratio_to_bare": round(wall / bare_wall, 3),
            "cpu_ratio_to_bare": round(cpu / bare_cpu, 3),
            "rtf_wall": round(wall / audio_s, 3),
            "cpu_s_per_audio_s": round(cpu / audio_s, 3),
            "cost_per_audio_hour_wall_usd": round(wall / audio_s * PRICE_PER_HOUR, 4),
            "cost_per_audio_hour_2vcpu_usd": round(cpu / audio_s / 2 * PRICE_PER_HOUR, 4),
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Audio: {result['audio_s']:.0f} s of LibriVox read speech (MP3), tiny.en int8 on CPU, "
        f"beam 5; {result['repeats']} repeats each, interleaved; machine: {result['machine']}.",
        "",
        "| path | median wall (s) | wall ratio to bare | median CPU (s) | CPU ratio to bare "
        "| RTF (wall) | CPU s per audio s | $ per audio hour, wall here | $ per audio hour, 2 vCPU busy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path, row in result["paths"].items():
        lines.append(
            f"| {path} | {row['median_wall_s']:.1f} | {row['wall_ratio_to_bare']:.3f}x "
            f"| {row['median_cpu_s']:.1f} | {row['cpu_ratio_to_bare']:.3f}x | {row['rtf_wall']:.3f} "
            f"| {row['cpu_s_per_audio_s']:.3f} | ${row['cost_per_audio_hour_wall_usd']:.4f} "
            f"| ${row['cost_per_audio_hour_2vcpu_usd']:.4f} |"
        )
    lines += [
        "",
        f"Price assumed: {PRICE_NOTE}. RTF = wall seconds per audio second. The flow's CPU "
        "time leaves out Prefect's server, a separate process.",
        f"WER of tiny.en on the five LibriVox utterances: {result['wer_librivox']:.3f}.",
    ]
    long = result.get("long")
    if long:
        lines += [
            "",
            f"Peak RSS on {long['audio_s']:.0f} s of audio, one child process per path, "
            "sampled every 50 ms while the path runs:",
            "",
            "| path | RSS after loading models (MiB) | peak while running (MiB) | growth (MiB) "
            "| wall (s) | CPU (s) | CPU ratio to bare |",
            "|---|---|---|---|---|---|---|",
        ]
        bare_cpu = long["paths"]["bare"]["cpu_s"]
        for path, row in long["paths"].items():
            growth = row["peak_run_mib"] - row["rss_after_load_mib"]
            lines.append(
                f"| {path} | {row['rss_after_load_mib']:.0f} | {row['peak_run_mib']:.0f} "
                f"| {growth:.0f} | {row['wall_s']:.0f} | {row['cpu_s']:.0f} "
                f"| {row['cpu_s'] / bare_cpu:.3f}x |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--long-minutes", type=float, default=0.0)
    parser.add_argument("--child", choices=["bare", "steps"])
    parser.add_argument("--audio", type=Path)
    parser.add_argument("--root", type=Path)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    from flows.runtime import configure_offline

    configure_offline()
    if args.child:
        child(args.child, args.audio, args.root, args.report)
        return
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        audio = Path(scratch) / "speech.mp3"
        audio_s = make_audio(args.minutes, audio)
        warm_up(utterances()[0][0])
        print(f"{audio_s:.0f} s of audio, {args.repeats} repeats", flush=True)
        runs = side_by_side(audio, args.repeats)
        result: dict[str, Any] = {
            "audio_s": audio_s,
            "repeats": args.repeats,
            "paths": summarise(runs, audio_s),
            "wer_librivox": round(wer_librivox(), 4),
            "price": PRICE_NOTE,
            "machine": f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end",
        }
        if args.long_minutes:
            long_audio = Path(scratch) / "long.mp3"
            long_s = make_audio(args.long_minutes, long_audio)
            print(f"peak RSS on {long_s:.0f} s of audio", flush=True)
            paths = {path: peak_rss(path, long_audio) for path in ("steps", "bare")}
            result["long"] = {"audio_s": long_s, "paths": paths}
    (OUT / "ingest.json").write_text(json.dumps(result, indent=2))
    text = markdown(result)
    (OUT / "ingest.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
