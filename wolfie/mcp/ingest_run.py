"""The background half of the MCP ``ingest`` tool: ``python -m wolfie.mcp.ingest_run RUN_ID
PACK ROOT SOURCE...`` runs the ingestion flows under the flow-run name ``RUN_ID``.

Documents (files with a document suffix, or folders) go through the documents flow,
everything else through the media flow, as ``wolfie ingest`` does. Exit status 2 when a
source failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from flows.runtime import configure_offline
from packs.ingest.documents import KINDS as DOCUMENT_KINDS


def is_document(source: str) -> bool:
    if "://" in source:
        return False
    path = Path(source).expanduser()
    return path.is_dir() or path.suffix.lower() in DOCUMENT_KINDS


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print("usage: python -m wolfie.mcp.ingest_run RUN_ID PACK ROOT SOURCE...", file=sys.stderr)
        return 2
    configure_offline()
    from flows.documents import ingest_documents_flow
    from flows.ingest import ingest_media_flow

    run_id, pack, root_arg, *sources = argv
    root = root_arg or None
    documents = [s for s in sources if is_document(s)]
    media = [s for s in sources if s not in documents]
    failed = 0
    if documents:
        documents_flow = ingest_documents_flow.with_options(flow_run_name=f"{run_id}-documents")
        result = documents_flow(paths=documents, pack=pack, root=root, fail_on_error=False)
        failed += sum(1 for row in result.documents if row.error)
    if media:
        media_flow = ingest_media_flow.with_options(flow_run_name=run_id)
        ingested = media_flow(sources=media, pack=pack, root=root)
        failed += sum(1 for item in ingested.items if item.get("status") == "failed")
    print(f"{run_id}: {len(sources) - failed} of {len(sources)} sources ingested")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
