"""What ``ingest_status`` shows an agent: host paths outside the allowed folders redacted
(wolfie/mcp/ingest_runs.py). The runs themselves: tests/wolfie/test_mcp_ingest_policy.py."""

from __future__ import annotations

from pathlib import Path

from packs.ingest.policy import IngestPolicy
from wolfie.mcp.ingest_runs import IngestRuns


def test_status_text_shows_no_host_path_outside_the_allowed_folders(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    runs = IngestRuns("p", None, IngestPolicy.build(roots=[str(docs)]))
    log = (
        f'File "/usr/lib/python3.11/site-packages/prefect/x.py", line 3\n'
        f"No document at '{docs}/guide.md' (not {docs}-old/guide.md)\n"
        f"opened /home/op/.wolfie/p for file://{docs}/a.md and file:///etc/passwd\n"
        "fetched https://media.example.com/talks/a.mp3; path=/tmp/wolfie-ingest/x"
    )
    assert runs.redact(log) == (
        'File "<host path>", line 3\n'
        f"No document at '{docs}/guide.md' (not <host path>)\n"
        f"opened <host path> for file://{docs}/a.md and file://<host path>\n"
        "fetched https://media.example.com/talks/a.mp3; path=<host path>"
    )
