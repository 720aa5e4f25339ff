"""Audio I/O through PyAV: keep only the audio stream, then decode it in bounded windows.

:func:`extract_audio` copies the first audio stream into Matroska without re-encoding,
so a seven-hour screen recording checkpoints as its audio track only, bit for bit.
:func:`iter_windows` decodes 16 kHz mono int16 (the resampling faster-whisper does) and
yields windows of about ``window_s`` seconds, each cut at the quietest 100 ms near its
end so that words are rarely split. Memory is one window, whatever the media's length.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from packs.errors import CorruptMedia, EmptyMedia, NotMedia, WolfieError

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000  # what Whisper models take
SILENCE_PEAK = 33  # int16 peak below -60 dBFS (32768 * 10**-3): nothing audible
_FRAME = SAMPLE_RATE // 10  # 100 ms, the unit of the quiet-point search
_MAGIC = {b"%PDF": "PDF", b"PK\x03\x04": "ZIP", b"\x89PNG": "PNG image", b"GIF8": "GIF image"}

Samples = NDArray[np.int16]


@dataclass(frozen=True)
class AudioTrack:
    """What :func:`extract_audio` wrote: codec and the container's duration estimate."""

    codec: str
    duration_s: float | None
    remuxed: bool  # False when the original file was kept as it is


@dataclass(frozen=True)
class AudioWindow:
    start_sample: int
    samples: Samples

    @property
    def start_s(self) -> float:
        return self.start_sample / SAMPLE_RATE

    @property
    def end_sample(self) -> int:
        return self.start_sample + len(self.samples)

    @property
    def silent(self) -> bool:
        return not len(self.samples) or int(np.abs(self.samples).max()) < SILENCE_PEAK

    def as_float(self) -> NDArray[np.float32]:
        return self.samples.astype(np.float32) / 32768.0


def extract_audio(src: Path, dest: Path, display: str) -> AudioTrack:
    """Write ``src``'s first audio stream to ``dest`` (Matroska, stream copy)."""
    import av

    try:
        container = av.open(str(src))
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise unreadable(src, display, exc) from exc
    with container:
        if not container.streams.audio:
            what = "video with no audio track" if container.streams.video else "no audio"
            raise NotMedia(f"{display!r} has {what} ({container.format.name}); nothing to hear.")
        stream = container.streams.audio[0]
        duration = _duration_s(container, stream)
        codec = stream.codec_context.name
        try:
            with av.open(str(dest), "w", format="matroska") as out:
                copy = out.add_stream_from_template(stream)
                for packet in container.demux(stream):
                    if packet.dts is None:
                        continue  # the demuxer's flush packet
                    packet.stream = copy
                    out.mux(packet)
        except av.error.FFmpegError as exc:
            log.info("Keeping %s as it is: remuxing its %s audio failed (%s)", display, codec, exc)
            shutil.copyfile(src, dest)
            return AudioTrack(codec, duration, remuxed=False)
    return AudioTrack(codec, duration, remuxed=True)


def _duration_s(container: object, stream: object) -> float | None:
    duration = getattr(container, "duration", None)  # microseconds
    if duration:
        return float(duration) / 1e6
    if getattr(stream, "duration", None) and getattr(stream, "time_base", None):
        return float(stream.duration * stream.time_base)  # type: ignore[attr-defined]
    return None


def unreadable(path: Path, display: str, exc: BaseException) -> WolfieError:
    """NotMedia for a file that is plainly something else, else CorruptMedia."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    if not head:
        return EmptyMedia(f"{display!r} is an empty file (0 bytes); nothing to ingest.")
    kind = sniff(head)
    if kind:
        return NotMedia(f"{display!r} is a {kind} file, not audio or video.")
    return CorruptMedia(
        f"{display!r} could not be decoded ({exc}). The file may be truncated or damaged: "
        "download or export it again."
    )


def sniff(head: bytes) -> str | None:
    """A name for non-media content (text, HTML, PDF, images...), or None."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG image"
    try:
        text = head[: len(head) - 3].decode("utf-8") if len(head) > 3 else head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    lowered = text.lstrip().lower()
    return "HTML" if lowered.startswith(("<!doctype html", "<html")) else "text"


def decode_blocks(path: Path, display: str) -> Iterator[Samples]:
    """16 kHz mono int16 blocks of ``path``'s first audio stream, in order."""
    import av

    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        raise unreadable(path, display, exc) from exc
    resampler = av.audio.resampler.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    good = bad = 0
    with container:
        if not container.streams.audio:
            raise NotMedia(f"{display!r} has no audio stream.")
        for packet in container.demux(container.streams.audio[0]):
            try:
                frames = packet.decode()
            except av.error.InvalidDataError:
                bad += 1  # skip a damaged packet, as faster-whisper's decoder does
                continue
            for frame in frames:
                good += 1
                for out in resampler.resample(frame):
                    yield _int16(out.to_ndarray())
        for out in resampler.resample(None):
            yield _int16(out.to_ndarray())
    if bad and not good:
        raise CorruptMedia(f"{display!r}: none of its {bad} audio packets could be decoded.")
    if bad:
        log.warning("%s: skipped %d damaged audio packets", display, bad)


def _int16(array: NDArray[np.generic]) -> Samples:
    return array.reshape(-1).astype(np.int16, copy=False)


def iter_windows(
    path: Path, display: str, window_s: float, start_sample: int = 0, search_s: float = 10.0
) -> Iterator[AudioWindow]:
    """Windows of about ``window_s`` seconds from ``start_sample`` on, cut at quiet points.

    The cuts depend only on the audio, so a resumed run that starts at a window's end
    sees exactly the windows the interrupted run would have seen.
    """
    window = max(_FRAME, int(window_s * SAMPLE_RATE))
    search = min(int(search_s * SAMPLE_RATE), window // 4)
    pending: list[Samples] = []
    buffered = 0
    position = 0  # absolute index of the first pending sample
    for block in decode_blocks(path, display):
        if position + len(block) <= start_sample and not pending:
            position += len(block)
            continue
        if position < start_sample:
            block = block[start_sample - position :]
            position = start_sample
        pending.append(block)
        buffered += len(block)
        while buffered >= window:
            samples = np.concatenate(pending)
            cut = quiet_cut(samples[:window], search)
            yield AudioWindow(position, samples[:cut])
            position += cut
            pending, buffered = [samples[cut:]], len(samples) - cut
    if buffered:
        yield AudioWindow(position, np.concatenate(pending))


def quiet_cut(samples: Samples, search: int) -> int:
    """Where to end a window: the middle of the quietest 100 ms in its last ``search``."""
    frames = search // _FRAME
    if frames < 1:
        return len(samples)
    region = samples[len(samples) - frames * _FRAME :].astype(np.float32)
    energy = np.square(region.reshape(frames, _FRAME)).mean(axis=1)
    # The latest of equally quiet frames keeps windows as long as possible.
    quietest = frames - 1 - int(np.argmin(energy[::-1]))
    return len(samples) - (frames - quietest) * _FRAME + _FRAME // 2
