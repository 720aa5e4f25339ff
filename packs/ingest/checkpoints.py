"""Ingestion checkpoints: small objects in the Pack's own storage, keyed by media id.

Everything lives under ``<root>/<pack>/_ingest/`` next to the Pack's LanceDB tables,
on a local folder or in the same S3 bucket, reached with the same ``AWS_*`` variables
or ``storage_options`` as the Pack (:func:`packs.store.locations.locate`). Each object is
written whole and at once (an S3 PUT; a local write then rename), so a reader sees an
old object or a complete new one, never half of one. Layout: :class:`CheckpointKeys`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from packs.store.faults import classify_fault
from packs.store.locations import PackLocation, is_remote
from packs.store.s3 import s3_client

PREFIX = "_ingest"


class CheckpointKeys:
    """Where each step's output is kept, relative to ``<pack>/_ingest/``."""

    @staticmethod
    def source(source_key: str) -> str:
        return f"_sources/{source_key}.json"  # URL or path -> media id of its last fetch

    @staticmethod
    def media(media_id: str) -> str:
        return f"{media_id}/media.json"

    @staticmethod
    def audio(media_id: str) -> str:
        return f"{media_id}/audio.mka"

    @staticmethod
    def transcript_part(media_id: str, fingerprint: str, index: int) -> str:
        return f"{media_id}/transcript/{fingerprint}/part-{index:05d}.json"

    @staticmethod
    def transcript_done(media_id: str, fingerprint: str) -> str:
        return f"{media_id}/transcript/{fingerprint}/transcript.json"

    @staticmethod
    def chunks(media_id: str, fingerprint: str) -> str:
        return f"{media_id}/chunks/{fingerprint}.jsonl"


class CheckpointStore:
    """Read and write checkpoint objects of one Pack (local folder or S3)."""

    def __init__(self, location: PackLocation) -> None:
        self.location = location
        self.uri = f"{location.uri}/{PREFIX}"
        self._remote = is_remote(location.uri)
        self._client: Any = None
        if self._remote:
            bucket, _, prefix = location.uri.split("://", 1)[1].partition("/")
            self._bucket, self._prefix = bucket, f"{prefix.strip('/')}/{PREFIX}".lstrip("/")
        else:
            self._base = Path(location.uri) / PREFIX

    def __repr__(self) -> str:
        return f"CheckpointStore({self.uri!r})"

    # --- JSON objects --------------------------------------------------------------------

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, ensure_ascii=False, sort_keys=True).encode())

    def get_json(self, key: str) -> Any | None:
        data = self.get_bytes(key)
        return None if data is None else json.loads(data)

    # --- bytes and files -----------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes) -> None:
        with self._guard(f"write {key}"):
            if self._remote:
                self._s3.put_object(Bucket=self._bucket, Key=self._key(key), Body=data)
            else:
                self._atomic_local(key, lambda tmp: tmp.write_bytes(data))

    def get_bytes(self, key: str) -> bytes | None:
        with self._guard(f"read {key}"):
            if not self._remote:
                path = self._base / key
                return path.read_bytes() if path.is_file() else None
            try:
                body = self._s3.get_object(Bucket=self._bucket, Key=self._key(key))["Body"]
            except self._s3.exceptions.NoSuchKey:
                return None
            return bytes(body.read())

    def put_file(self, key: str, path: Path) -> None:
        """Store a local file (streamed: S3 multipart above 8 MB, bounded memory)."""
        with self._guard(f"upload {key}"):
            if self._remote:
                self._s3.upload_file(str(path), self._bucket, self._key(key))
            else:
                self._atomic_local(key, lambda tmp: _copy(path, tmp))

    def get_file(self, key: str, dest: Path) -> bool:
        """Copy an object to ``dest``; False when there is no such object."""
        if not self.exists(key):
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        with self._guard(f"download {key}"):
            if self._remote:
                self._s3.download_file(self._bucket, self._key(key), str(dest))
            else:
                _copy(self._base / key, dest)
        return True

    def local_path(self, key: str) -> Path | None:
        """The object's own file on a local root (no copy needed), else None."""
        if self._remote:
            return None
        path = self._base / key
        return path if path.is_file() else None

    def exists(self, key: str) -> bool:
        with self._guard(f"look up {key}"):
            if not self._remote:
                return (self._base / key).is_file()
            try:
                self._s3.head_object(Bucket=self._bucket, Key=self._key(key))
            except self._botocore.ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    return False
                raise
            return True

    def list(self, prefix: str) -> list[str]:
        """Keys under ``prefix`` (relative to ``_ingest/``), sorted."""
        with self._guard(f"list {prefix}"):
            if not self._remote:
                base = self._base / prefix
                if not base.is_dir():
                    return []
                return sorted(
                    p.relative_to(self._base).as_posix() for p in base.rglob("*") if p.is_file()
                )
            keys: list[str] = []
            pages = self._s3.get_paginator("list_objects_v2")
            for page in pages.paginate(Bucket=self._bucket, Prefix=self._key(prefix)):
                keys += [c["Key"][len(self._prefix) + 1 :] for c in page.get("Contents", [])]
            return sorted(keys)

    # --- internals -----------------------------------------------------------------------

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    @property
    def _botocore(self) -> Any:
        import botocore.exceptions

        return botocore.exceptions

    @property
    def _s3(self) -> Any:
        if self._client is None:
            self._client = s3_client(self.location.storage_options)
        return self._client

    def _atomic_local(self, key: str, write: Any) -> None:
        path = self._base / key
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            write(Path(tmp))
            os.replace(tmp, path)  # atomic on POSIX: old object or the whole new one
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    @contextlib.contextmanager
    def _guard(self, step: str) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            where = f"checkpoints of Pack {self.location.name!r}, {step}"
            error = classify_fault(
                exc, where, self.location.storage_options, missing_file_is_fault=True
            )
            if error is None:
                raise
            raise error from exc


def _copy(src: Path, dest: Path) -> None:
    import shutil

    shutil.copyfile(src, dest)
