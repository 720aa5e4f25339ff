"""One exception family for Wolfie.

Every error a caller can act on derives from :class:`WolfieError` and also from the
built-in that fits, so ``except ValueError`` keeps working for generic callers.
:class:`TransientError` marks faults worth retrying (Prefect's ``retry_condition_fn``
uses :func:`is_transient`); everything else is permanent. The tree (built-in bases in
brackets; ``tests/packs/test_errors.py`` keeps it true)::

    WolfieError (Exception)
      TransientError
        TransientStorageError (OSError)
        MediaUnreachable (ConnectionError)
      InvalidInput (ValueError)
        InvalidPackName
        TextTooLong
        InvalidReward
        InvalidFilter
        InvalidSettings
        MetadataTooLarge
        UnsupportedSource
        NotMedia
        CorruptMedia
        EmptyMedia
        SilentMedia
        SourceTooLarge
        PackNotEmpty
      PackNotFound (LookupError)
        PackNotServed
      EmptyPack (LookupError)
      UnknownEpisode (LookupError)
      UnknownMemory (LookupError)
      ReadOnlyPack (PermissionError)
      EmbeddingMismatch (ValueError)
      SchemaVersionError (RuntimeError)
      EmbeddingServiceError (RuntimeError)
        TransientEmbeddingServiceError
        InvalidEmbedding (ValueError)
      StorageError (OSError)
        DamagedPack
      UnwritableRows (ValueError)
      SourceNotFound (LookupError)
      MediaDownloadError (RuntimeError)
      ModelNotAvailable (FileNotFoundError)
      CheckpointMissing (LookupError)
      IngestFailed (RuntimeError)
      SourceNotAllowed (PermissionError)
      TooManyRuns (RuntimeError)
      MissingExtra (ImportError)
      CsrfRefused (PermissionError)
      LessonWriterError (RuntimeError)
        TransientLessonWriterError
      EvalSetNotFound (LookupError)

Every ``WolfieError`` subclass under ``packs/``, ``wolfie/``, ``tasks/``, ``flows/``,
``evals/`` and ``deployments/`` is defined here (``tests/packs/test_errors.py`` walks
them); a module that raises one re-exports it where callers already import it from.
"""

from __future__ import annotations


class WolfieError(Exception):
    """Base class of every error Wolfie raises on purpose."""


class TransientError(WolfieError):
    """A fault that may pass if the step is retried (storage 5xx, timeouts)."""


class InvalidInput(WolfieError, ValueError):
    """Caller input that can never succeed as given."""


class InvalidPackName(InvalidInput):
    """A Pack name that could escape its root or is empty."""


class TextTooLong(InvalidInput):
    """Text above the Pack's ``max_text_chars`` policy."""


class InvalidReward(InvalidInput):
    """A reward that is NaN, infinite, out of range or of an unknown signal."""


class InvalidFilter(InvalidInput):
    """A metadata filter on an unknown column or with an unsupported value."""


class InvalidSettings(InvalidInput):
    """Pack settings with unknown keys or values out of range."""


class MetadataTooLarge(InvalidInput):
    """Metadata with too many keys, or a key or value above its length bound."""


class PackNotFound(WolfieError, LookupError):
    """The Pack does not exist under the given root. ``pack`` and ``root`` name it when
    the open knows them (then a front door says how to make one in its own terms)."""

    def __init__(self, message: str, pack: str = "", root: str = "") -> None:
        super().__init__(message)
        self.pack, self.root = pack, root

    def __reduce__(self) -> tuple[type[PackNotFound], tuple[str, str, str]]:
        return type(self), (str(self), self.pack, self.root)  # pickles across processes


class PackNotServed(PackNotFound):
    """A Pack the REST server (``wolfie api --pack``) was not started with: 404 there."""


class EmptyPack(WolfieError, LookupError):
    """The Pack exists but holds no memories or knowledge yet."""


class UnknownEpisode(WolfieError, LookupError):
    """An episode id that this Pack never logged."""


class UnknownMemory(WolfieError, LookupError):
    """A memory id that this Pack does not hold."""


class ReadOnlyPack(WolfieError, PermissionError):
    """A write through a handle opened with ``read_only=True``."""


class EmbeddingMismatch(WolfieError, ValueError):
    """The embedder does not match the one the Pack was built with."""


class SchemaVersionError(WolfieError, RuntimeError):
    """The Pack was written by a newer Wolfie than this one."""


class EmbeddingServiceError(WolfieError, RuntimeError):
    """An embedding endpoint answered with an error or an unusable body."""


class TransientEmbeddingServiceError(EmbeddingServiceError, TransientError):
    """The embedding endpoint kept answering 429/5xx or could not be reached."""


class InvalidEmbedding(EmbeddingServiceError, ValueError):
    """An embedder returned non-finite values or vectors of the wrong shape."""


class StorageError(WolfieError, OSError):
    """Storage failed permanently (permissions, missing bucket)."""


class DamagedPack(StorageError):
    """A file a Pack's table needs is missing or corrupt at its latest version, or its
    settings (``pack_meta``) are gone: restore from a backup (``wolfie doctor``)."""


class TransientStorageError(TransientError, OSError):
    """Storage failed in a way that a retry may fix (5xx, connection reset)."""


class UnwritableRows(WolfieError, ValueError):
    """Buffered rows that the table refused on their own; they were dropped (and logged)
    so that they can't block the rows buffered after them."""


# --- ingestion (packs.ingest) ----------------------------------------------------------


class UnsupportedSource(InvalidInput):
    """A media source that is neither an http(s) URL nor a local file (or absurdly long)."""


class SourceNotFound(WolfieError, LookupError):
    """A URL answered 404/410, or a local file does not exist."""


class MediaUnreachable(TransientError, ConnectionError):
    """The media server refused, timed out or answered 5xx/429; a retry may succeed."""


class MediaDownloadError(WolfieError, RuntimeError):
    """The download failed permanently for another reason (403, other 4xx)."""


class NotMedia(InvalidInput):
    """The file is not audio or video (a text, HTML or image file, or no audio stream)."""


class CorruptMedia(InvalidInput):
    """The file claims to be media but cannot be decoded."""


class EmptyMedia(InvalidInput):
    """The file is empty or its audio lasts zero seconds."""


class SilentMedia(InvalidInput):
    """The audio holds no audible signal, or the transcriber found no speech in it."""


class ModelNotAvailable(WolfieError, FileNotFoundError):
    """The transcription model is not on this machine (nothing is downloaded at run time)."""


class CheckpointMissing(WolfieError, LookupError):
    """A step's input checkpoint is absent: run the earlier step again."""


class IngestFailed(WolfieError, RuntimeError):
    """Some items of an ingestion run failed; the message lists each one and why."""


class SourceNotAllowed(WolfieError, PermissionError):
    """A source outside what the operator allowed an agent to ingest (``wolfie mcp
    --ingest-root`` / ``--ingest-url-prefix``), or an address it may not reach."""


class SourceTooLarge(InvalidInput):
    """A document or media source above the size limit of the run."""


class TooManyRuns(WolfieError, RuntimeError):
    """A server already runs as many ingestions as it may at once; retry when one ends."""


def is_transient(exc: BaseException) -> bool:
    """True when retrying the step that raised ``exc`` may succeed."""
    return isinstance(exc, TransientError)


class MissingExtra(WolfieError, ImportError):
    """A command needs an optional part of the install (``packs/extras.py``)."""


class CsrfRefused(WolfieError, PermissionError):
    """A form post to the explorer without the server's CSRF token, or from another
    origin (wolfie/ui/security.py)."""


# --- lessons, eval sets, transfer (re-exported by packs.lessons.writers, packs.eval_sets
# and packs.transfer.pack_io, where callers import them from) ---------------------------


class LessonWriterError(WolfieError, RuntimeError):
    """The writer gave no usable lesson; the old one stays."""


class TransientLessonWriterError(LessonWriterError, TransientError):
    """The writer's endpoint timed out or answered 429/5xx."""


class EvalSetNotFound(WolfieError, LookupError):
    """No eval set of that name (or none at all) is stored with the Pack."""


class PackNotEmpty(InvalidInput):
    """An import into a Pack that already holds rows, without ``merge``."""
