"""The background half of the MCP ``ingest`` tool: ``python -m wolfie.mcp.ingest_run JOB``
runs the ingestion flows for the job file that :mod:`wolfie.mcp.ingest_runs` wrote, under
the flow-run name of its ``run_id``, in its ``scope`` and within its ``policy``.

Documents (files with a document suffix, or folders) go through the documents flow,
everything else through the media flow, as ``wolfie ingest`` does. The run writes its
status file when it starts and when it ends: the items (document files and media) it
ingested or failed, with each failure's error, and the chunks of the ingested ones.
Exit status 2 when a source failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from flows.runtime import configure_offline
from packs.ingest.documents import KINDS as DOCUMENT_KINDS
from packs.ingest.policy import IngestPolicy


def is_document(source: str) -> bool:
    if "://" in source:
        return False
    path = Path(source).expanduser()
    return path.is_dir() or path.suffix.lower() in DOCUMENT_KINDS


def write_status(path: Path, status: dict[str, Any]) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(status), encoding="utf-8")
    partial.replace(path)  # a reader never sees half a file


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m wolfie.mcp.ingest_run JOB_FILE", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    status = Path(job["status"])
    sources: list[str] = job["sources"]
    write_status(status, {"state": "running", "sources": len(sources)})
    configure_offline()
    from flows.documents import ingest_documents_flow
    from flows.ingest import ingest_media_flow

    run_id, pack, root, scope = job["run_id"], job["pack"], job["root"], job["scope"]
    limits = job["policy"]
    policy = IngestPolicy(
        tuple(limits["roots"]),
        tuple(limits["url_prefixes"]),
        int(limits["max_document_bytes"]),
        int(limits["max_media_bytes"]),
    )
    documents = [s for s in sources if is_document(s)]
    media = [s for s in sources if s not in documents]
    errors: list[str] = []
    items = chunks = 0
    if documents:
        documents_flow = ingest_documents_flow.with_options(flow_run_name=f"{run_id}-documents")
        result = documents_flow(
            paths=documents, pack=pack, root=root, fail_on_error=False, scope=scope, policy=policy
        )
        errors += [f"{row.path}: {row.error}" for row in result.documents if row.error]
        items, chunks = len(result.documents), result.chunks
    if media:
        media_flow = ingest_media_flow.with_options(flow_run_name=run_id)
        ingested = media_flow(
            sources=media, pack=pack, root=root, fail_on_error=False, scope=scope, policy=policy
        )
        errors += [f"{i['source']}: {i['error']}" for i in ingested.items if i.get("error")]
        items += len(ingested.items)
        chunks += sum(int(i.get("chunks") or 0) for i in ingested.items if not i.get("error"))
    failed = len(errors)
    write_status(
        status,
        {
            "state": "failed" if failed else "finished",
            "sources": len(sources),
            "items": items,
            "ingested": items - failed,
            "failed": failed,
            "chunks": chunks,
            "errors": errors,
        },
    )
    print(f"{run_id}: {items - failed} of {items} items ingested")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
