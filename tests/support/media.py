"""Real media for ingestion tests: espeak-ng speech with known text and timings, muxed
with ffmpeg, bad files of each kind, and a local HTTP server that yt-dlp downloads from.

Speech is synthesised one sentence at a time and joined with a fixed pause, so the
start and end second of every sentence is known exactly (:class:`Spoken`). The texts
avoid digits and abbreviations, which a recogniser writes in forms ("2%", "Mr.") that
a word error rate would count as errors although they are heard right.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import socket
import subprocess
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ONBOARDING = (
    "Welcome to the onboarding session for the night shift at the harbour warehouse.",
    "First, always wear the orange safety vest when you walk between the loading docks.",
    "The forklift keys are kept in the locked cabinet beside the supervisor's office.",
    "If a pallet is damaged, take a photo and report it before you move anything.",
    "Frozen goods must go into the cold room within ten minutes of their arrival.",
    "The fire assembly point is the green painted area near the north gate.",
    "Lunch breaks are staggered, so check the rota on the kitchen notice board.",
    "Finally, sign out at the security desk and return your badge before you leave.",
)
GARDEN = (
    "Tomatoes need a sunny wall and a deep watering twice a week in summer.",
    "Pinch out the side shoots so that the plant puts its energy into the fruit.",
    "Slugs are kept away from young lettuce by a ring of crushed eggshells.",
    "Compost made from kitchen scraps is ready after about six months.",
)
HELLO = (
    "Hello from the test suite.",
    "This short clip checks that a good item still goes through.",
    "It ends here.",
)
GAP_S = 0.6  # silence between sentences


@dataclass(frozen=True)
class Spoken:
    """A synthesised recording: where it is, what is said in it, and when."""

    path: Path
    sentences: tuple[tuple[str, float, float], ...]  # (text, start_s, end_s)

    @property
    def text(self) -> str:
        return " ".join(text for text, _, _ in self.sentences)

    @property
    def duration_s(self) -> float:
        return self.sentences[-1][2] + GAP_S

    def when(self, fragment: str) -> tuple[float, float]:
        """Start and end second of the sentence that contains ``fragment``."""
        return next((s, e) for text, s, e in self.sentences if fragment in text)


@dataclass(frozen=True)
class Clips:
    """The speech clips the ingestion tests use, in one folder."""

    folder: Path
    onboarding: Spoken  # mp3, 44 s
    garden: Spoken  # mp4 video with an AAC track, 21 s
    hello: Spoken  # wav, 9 s


def make_clips(folder: Path) -> Clips:
    onboarding = to_mp3(speak(ONBOARDING, folder / "onboarding.wav"), folder / "onboarding.mp3")
    garden = to_mp4(speak(GARDEN, folder / "garden.wav"), folder / "garden.mp4")
    return Clips(folder, onboarding, garden, speak(HELLO, folder / "hello.wav"))


def require_tools() -> None:
    missing = [tool for tool in ("espeak-ng", "ffmpeg") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"Missing {missing}: install the Debian packages espeak-ng and ffmpeg "
            "(scripts/test.sh does)."
        )


def speak(sentences: tuple[str, ...], dest: Path, repeat: int = 1, gap_s: float = GAP_S) -> Spoken:
    """Synthesise ``sentences`` (``repeat`` times over) into one wav with known timings."""
    require_tools()
    frames: list[bytes] = []
    timings: list[tuple[str, float, float]] = []
    rate = 22_050
    clock = gap_s
    silence = b""
    for index, text in enumerate(sentences * repeat):
        part = dest.with_name(f"{dest.stem}.{index}.wav")
        subprocess.run(
            ["espeak-ng", "-v", "en-us", "-s", "155", "-w", str(part), text],
            check=True,
            capture_output=True,
        )
        with wave.open(str(part), "rb") as clip:
            rate, width = clip.getframerate(), clip.getsampwidth()
            data = clip.readframes(clip.getnframes())
        part.unlink()
        silence = b"\x00" * int(gap_s * rate) * width
        frames += [silence if index == 0 else b"", data, silence]
        seconds = len(data) / width / rate
        timings.append((text, round(clock, 3), round(clock + seconds, 3)))
        clock += seconds + gap_s
    with wave.open(str(dest), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(frames))
    return Spoken(dest, tuple(timings))


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *args], check=True)


def to_mp3(spoken: Spoken, dest: Path) -> Spoken:
    ffmpeg("-i", str(spoken.path), "-ac", "1", "-ar", "16000", "-b:a", "32k", str(dest))
    return Spoken(dest, spoken.sentences)


def to_mp4(spoken: Spoken, dest: Path) -> Spoken:
    """A real video: a small black picture track and the speech as AAC."""
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "color=c=black:s=64x64:r=5",
        "-i",
        str(spoken.path),
        "-shortest",
        "-c:v",
        "libx264",
        "-c:a",
        "aac",
        "-b:a",
        "48k",
        str(dest),
    )
    return Spoken(dest, spoken.sentences)


def bad_files(folder: Path, video: Path) -> dict[str, Path]:
    """One file of each kind of bad input: text, corrupt (a truncated mp4), empty, silent."""
    files = {
        "text": folder / "notes.mp3",  # a text file that claims to be an mp3
        "corrupt": folder / "truncated.mp4",
        "empty": folder / "empty.wav",
        "silent": folder / "silent.wav",
    }
    files["text"].write_text("These are meeting notes, not a recording.\n" * 20)
    data = video.read_bytes()
    files["corrupt"].write_bytes(data[: len(data) // 3])  # the moov index is at the end
    files["empty"].write_bytes(b"")
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "4", str(files["silent"]))
    return files


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over HTTP on 127.0.0.1; yields the base URL (no trailing slash)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def loopback_name() -> str | None:
    """This machine's host name if it resolves to loopback only (a DNS name that an
    allowlist by name must not let reach 127.0.0.1), else None."""
    name = socket.gethostname()
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        return None
    return name if found and all(a.startswith("127.") or a == "::1" for a in found) else None


def closed_port() -> int:
    """A local port with nothing listening on it (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
