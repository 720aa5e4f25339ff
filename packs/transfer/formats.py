"""The two export formats of a Pack, read and written with pyarrow and json only.

- **Parquet directory**: ``manifest.json`` and ``tables/<table>.parquet``, one file per
  table (vectors as fixed-size float32 lists, as stored).
- **JSONL** (a path ending in ``.jsonl``): line 1 is ``{"manifest": {...}}``, then one
  ``{"table": name, "row": {...}}`` per row, table after table; timestamps in ISO 8601,
  vectors as lists of numbers.

The manifest names the format and its version, the Pack's schema version and embedding
space, and each table with its row count and its Arrow schema (IPC bytes in base64, so
a JSONL row is decoded by type, and a table this code does not know, such as
``eval_sets``, is recreated as it was). Nothing read from a file chooses code to run:
table names must match :data:`TABLE_NAME`, values are data, there is no pickle.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from packs.errors import InvalidInput
from packs.lazy import lazy_module
from packs.validation import parse_json, shown

if TYPE_CHECKING:
    import pyarrow.parquet as pq
else:
    pq = lazy_module("pyarrow.parquet")  # loaded by an export or import, not by Pack.open

FORMAT = "wolfie-pack-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TABLES = "tables"
BATCH_ROWS = 8_192  # rows per batch read back (and per import commit)
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class Manifest:
    """What an export holds (the module docstring)."""

    pack: str
    exported_at: str
    schema_version: int
    embedding: dict[str, Any]
    tables: dict[str, dict[str, Any]]  # name -> {"rows": n, "version": v, "schema": b64}

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "pack": self.pack,
            "exported_at": self.exported_at,
            "schema_version": self.schema_version,
            "embedding": self.embedding,
            "tables": self.tables,
        }

    def schema(self, table: str) -> pa.Schema:
        return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(self.tables[table]["schema"])))


def encode_schema(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def is_jsonl(path: Path) -> bool:
    return path.suffix.lower() == ".jsonl"


# --- writing -------------------------------------------------------------------------------


def write_export(
    path: Path, manifest: Manifest, rows: Callable[[str], pa.Table], *, jsonl: bool
) -> None:
    """Write ``manifest`` and each of its tables (read one at a time by ``rows``) to
    ``path``: a new ``.jsonl`` file, or a new directory of Parquet files."""
    if jsonl:
        with path.open("w", encoding="utf-8") as out:
            out.write(json.dumps({"manifest": manifest.to_dict()}) + "\n")
            for name in manifest.tables:
                for batch in rows(name).to_batches(max_chunksize=BATCH_ROWS):
                    for row in batch.to_pylist():
                        line = {"table": name, "row": row}
                        out.write(json.dumps(line, default=_json_value, allow_nan=False) + "\n")
        return
    (path / TABLES).mkdir(parents=True)
    for name in manifest.tables:
        pq.write_table(rows(name), path / TABLES / f"{name}.parquet")
    (path / MANIFEST).write_text(json.dumps(manifest.to_dict(), indent=2), encoding="utf-8")


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# --- reading -------------------------------------------------------------------------------


def read_manifest(path: Path) -> Manifest:
    """The manifest of the export at ``path``, checked (a clear error for anything else)."""
    try:
        if is_jsonl(path):
            with path.open(encoding="utf-8") as lines:
                data = parse_json(lines.readline(), "the manifest").get("manifest")
        else:
            data = parse_json((path / MANIFEST).read_text(encoding="utf-8"), "the manifest")
    except FileNotFoundError as exc:
        raise InvalidInput(
            f"No Wolfie export at {str(path)!r}: expected a .jsonl file or a directory with "
            f"{MANIFEST}, as `wolfie export` writes."
        ) from exc
    except (ValueError, AttributeError, UnicodeDecodeError, IsADirectoryError) as exc:
        raise InvalidInput(f"{str(path)!r} is not a Wolfie export: {shown(exc)}") from None
    except OSError as exc:  # a file it may not read
        raise InvalidInput(f"Can't read the export {str(path)!r}: {exc.strerror}.") from None
    return _checked(data, path)


def _checked(data: object, path: Path) -> Manifest:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInput(f"{str(path)!r} is not a Wolfie export (no {FORMAT!r} manifest).")
    if data.get("format_version") != FORMAT_VERSION:
        raise InvalidInput(
            f"{str(path)!r} is export format version {data.get('format_version')!r}; this "
            f"Wolfie reads version {FORMAT_VERSION}. Export it again with this Wolfie."
        )
    try:
        manifest = Manifest(
            str(data["pack"]),
            str(data["exported_at"]),
            int(data["schema_version"]),
            dict(data["embedding"]),
            dict(data["tables"]),
        )
        for name, entry in manifest.tables.items():
            if not TABLE_NAME.fullmatch(name):
                raise InvalidInput(f"the table name {name!r} is not one Wolfie writes")
            manifest.schema(name)
            int(entry["rows"])
    except (KeyError, TypeError, ValueError, pa.ArrowException) as exc:
        raise InvalidInput(f"The manifest of {str(path)!r} is damaged: {exc}") from exc
    return manifest


@dataclass(frozen=True)
class Rows:
    """One batch of a table's rows read from an export, and where each row is in the
    file: line ``first + i`` of a JSONL file, or row ``first + i`` of a Parquet file."""

    table: str
    data: pa.Table
    file: str
    first: int
    jsonl: bool

    def where(self, index: int) -> str:
        if self.jsonl:
            return f"{self.file} line {self.first + index}"
        return f"{self.file} row {self.first + index + 1}"


def read_tables(path: Path, manifest: Manifest) -> Iterator[Rows]:
    """Each table's rows, in batches of at most :data:`BATCH_ROWS`, in the file's order
    (a table with no rows yields one empty batch). Anything unreadable is
    :class:`InvalidInput` naming the file and the line or row."""
    if is_jsonl(path):
        yield from _jsonl_tables(path, manifest)
        return
    for name in manifest.tables:
        file = path / TABLES / f"{name}.parquet"
        label = f"{str(path)!r}: {TABLES}/{name}.parquet"
        if not file.is_file():
            raise InvalidInput(f"The export {str(path)!r} lacks {TABLES}/{name}.parquet.")
        try:
            parquet = pq.ParquetFile(file)
            yield Rows(name, parquet.schema_arrow.empty_table(), label, 0, False)
            first = 0
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
                yield Rows(name, pa.Table.from_batches([batch]), label, first, False)
                first += batch.num_rows
        except (OSError, pa.ArrowException) as exc:  # ArrowInvalid: not a Parquet file
            raise InvalidInput(f"{label} is not a readable Parquet file: {exc}") from None


def _jsonl_tables(path: Path, manifest: Manifest) -> Iterator[Rows]:
    current: str | None = None
    rows: list[dict[str, Any]] = []
    first = 2
    label = repr(str(path))
    with path.open(encoding="utf-8", errors="strict") as lines:
        next(lines)  # the manifest
        number = 1
        while True:
            try:
                text = next(lines, None)
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"{label} line {number + 1} is not UTF-8: {exc}") from None
            if text is None:
                break
            number += 1
            name, row = _export_row(text, label, number)
            if name not in manifest.tables:
                raise InvalidInput(f"{label} line {number}: table {name!r} is not listed.")
            if name != current or len(rows) >= BATCH_ROWS:
                if current is not None:
                    yield _decoded(current, rows, manifest.schema(current), label, first)
                current, rows, first = name, [], number
            rows.append(row)
    if current is not None:
        yield _decoded(current, rows, manifest.schema(current), label, first)
    for name in manifest.tables:  # tables with no rows have no lines
        yield Rows(name, manifest.schema(name).empty_table(), label, 0, True)


def _export_row(text: str, label: str, number: int) -> tuple[str, dict[str, Any]]:
    """One JSONL line's table name and row; Python's limits (a 5,000-digit number,
    1,000-deep nesting) are refused as any malformed line is."""
    try:
        line = parse_json(text, f"{label} line {number}")
        name, row = line["table"], line["row"]
    except (KeyError, TypeError) as exc:
        raise InvalidInput(f"{label} line {number} is not an export row.") from exc
    except InvalidInput as exc:
        raise InvalidInput(f"{label} line {number} is not an export row: {exc}") from None
    if not isinstance(name, str) or not isinstance(row, dict):
        raise InvalidInput(f"{label} line {number} is not an export row.")
    return name, row


def _decoded(
    name: str, rows: list[dict[str, Any]], schema: pa.Schema, label: str, first: int
) -> Rows:
    try:
        return Rows(name, _arrow(rows, schema), label, first, True)
    except (ValueError, TypeError, pa.ArrowException):
        for index, row in enumerate(rows):  # only after a failure: find the row at fault
            try:
                _arrow([row], schema)
            except (ValueError, TypeError, pa.ArrowException) as exc:
                raise InvalidInput(
                    f"{label} line {first + index} holds a row unlike the {name!r} table's "
                    f"(a vector must have the Pack's dimension): {shown(exc)}"
                ) from None
        raise


def _arrow(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    values = [{f.name: _typed(row.get(f.name), f.type) for f in schema} for row in rows]
    return pa.Table.from_pylist(values, schema=schema)


def _typed(value: Any, kind: pa.DataType) -> Any:
    """A JSON value back in the Python type Arrow wants (timestamps from ISO 8601); a
    value of the wrong shape is a TypeError, found and named by :func:`_decoded`."""
    if value is None:
        return None
    if pa.types.is_timestamp(kind):
        if not isinstance(value, str):
            raise TypeError(f"a timestamp must be ISO 8601 text, not {shown(value)}")
        return datetime.fromisoformat(value)
    if pa.types.is_struct(kind):
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, not {shown(value)}")
        return {f.name: _typed(value.get(f.name), f.type) for f in kind}
    listed = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    if listed and (pa.types.is_timestamp(kind.value_type) or pa.types.is_struct(kind.value_type)):
        if not isinstance(value, list):
            raise TypeError(f"expected a list, not {shown(value)}")
        return [_typed(v, kind.value_type) for v in value]
    return value
