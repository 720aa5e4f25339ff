"""Looking for a marker everywhere a Pack keeps bytes: every version of every table (read
with LanceDB itself, time travel included) and every file under the Pack, on a folder or
on S3 (every object, listed and read with boto3)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import lancedb

from packs.pack import Pack
from tests.support.storage import storage_of


def versions_holding(pack: Pack, marker: str) -> list[str]:
    """``table@version`` of every stored version whose rows hold ``marker`` (any case)."""
    location = storage_of(pack).location
    db = lancedb.connect(location.uri, storage_options=location.storage_options or None)
    found = []
    for name in db.list_tables().tables:
        table = db.open_table(name)
        for version in table.list_versions():
            table.checkout(version["version"])
            if marker.lower() in str(table.to_arrow().to_pylist()).lower():
                found.append(f"{name}@{version['version']}")
    return found


def files_holding(pack: Pack, marker: str, s3: Any = None) -> list[str]:
    """Every file (object) under the Pack whose bytes hold ``marker``, any case."""
    needle = marker.lower().encode()
    uri = storage_of(pack).location.uri
    if s3 is None:
        paths = [os.path.join(folder, name) for folder, _, names in os.walk(uri) for name in names]
        return [path for path in paths if needle in Path(path).read_bytes().lower()]
    parsed = urlparse(uri)
    client, prefix = s3.client(), parsed.path.lstrip("/") + "/"
    found = []
    for page in client.get_paginator("list_objects_v2").paginate(
        Bucket=parsed.netloc, Prefix=prefix
    ):
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=parsed.netloc, Key=item["Key"])["Body"].read()
            if needle in body.lower():
                found.append(item["Key"])
    return found


def file_count(pack: Pack, s3: Any = None) -> int:
    uri = storage_of(pack).location.uri
    if s3 is None:
        return sum(len(names) for _, _, names in os.walk(uri))
    parsed = urlparse(uri)
    pages = (
        s3.client()
        .get_paginator("list_objects_v2")
        .paginate(Bucket=parsed.netloc, Prefix=parsed.path.lstrip("/") + "/")
    )
    return sum(len(page.get("Contents", [])) for page in pages)
