"""A boto3 client for a Pack's S3-compatible storage, for what Lance does not do itself:
listing Packs under a root, and ingestion checkpoints (``packs/ingest/checkpoints.py``).
boto3 comes with the ``batch`` extra, so it is imported only when a client is made."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Hand-set, like packs.store.locations.REMOTE_TIMEOUTS: fail fast on a dead endpoint and let
# the caller retry; botocore's "standard" mode retries 5xx and throttling 3 times.
CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 60


def s3_client(options: Mapping[str, str]) -> Any:
    """A boto3 S3 client from Lance-style ``storage_options`` (unset: boto3's own chain)."""
    import boto3
    from botocore.config import Config

    def pick(*names: str) -> str | None:
        return next((options[n] for n in names if options.get(n)), None)

    config = Config(
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        retries={"max_attempts": 3, "mode": "standard"},
    )
    return boto3.session.Session().client(
        "s3",
        endpoint_url=pick("aws_endpoint", "endpoint", "aws_endpoint_url"),
        region_name=pick("aws_region", "region") or "us-east-1",
        aws_access_key_id=pick("aws_access_key_id", "access_key_id"),
        aws_secret_access_key=pick("aws_secret_access_key", "secret_access_key"),
        aws_session_token=pick("aws_session_token", "session_token", "token"),
        config=config,
    )
