"""A real S3 endpoint for tests and scripts: moto's server on 127.0.0.1.

``moto_s3()`` starts ``moto.server.ThreadedMotoServer`` on a free port, creates a bucket
with boto3 and yields an :class:`S3Endpoint` that carries both ways a Pack can be pointed
at it: explicit Lance ``storage_options``, or the ``AWS_*`` variables in ``env``::

    with moto_s3() as s3:
        Pack.open("demo", s3.root, storage_options=s3.storage_options)
        with s3.environ():  # the AWS_* route
            Pack.open("demo", s3.fresh_root())

moto keeps its state in process-wide backends, so each server started here shares the
buckets of any other one in the same process; ``root`` and :meth:`S3Endpoint.fresh_root`
give unique prefixes so users never collide.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
from moto.server import ThreadedMotoServer

HOST = "127.0.0.1"
REGION = "us-east-1"
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
STOP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class S3Endpoint:
    """One running moto S3 endpoint and a bucket on it."""

    endpoint: str
    bucket: str
    root: str = field(default="")

    def __post_init__(self) -> None:
        if not self.root:
            object.__setattr__(self, "root", self.fresh_root())

    def fresh_root(self, label: str = "wolfie") -> str:
        """A new, unused ``s3://bucket/<label>-<hex>`` root on this endpoint."""
        return f"s3://{self.bucket}/{label}-{uuid.uuid4().hex[:12]}"

    @property
    def storage_options(self) -> dict[str, str]:
        """Lance object-store options for this endpoint (plain HTTP, fixed test keys)."""
        return {
            "aws_endpoint": self.endpoint,
            "allow_http": "true",
            "aws_region": REGION,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
        }

    @property
    def env(self) -> dict[str, str]:
        """The ``AWS_*`` variables that point the environment route at this endpoint."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
        }

    @contextlib.contextmanager
    def environ(self) -> Iterator[dict[str, str]]:
        """Set :attr:`env` in ``os.environ`` for the block, then restore what was there."""
        saved = {name: os.environ.get(name) for name in self.env}
        os.environ.update(self.env)
        try:
            yield self.env
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def client(self) -> Any:  # a botocore S3 client; boto3 ships no type stubs
        """A boto3 S3 client for this endpoint (listing objects in a test, say)."""
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )


@contextlib.contextmanager
def moto_s3(
    bucket: str = "wolfie-test", *, port: int = 0, quiet: bool = True
) -> Iterator[S3Endpoint]:
    """Run a moto S3 server on ``127.0.0.1:port`` (0 = any free port) with ``bucket``.

    ``quiet`` silences werkzeug's line per request. The server is stopped on exit; a
    shutdown that does not finish within ``STOP_TIMEOUT_S`` is abandoned (the server
    thread is a daemon) rather than awaited.
    """
    if quiet:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address=HOST, port=port, verbose=False)
    server.start()
    try:
        host, bound = server.get_host_and_port()
        s3 = S3Endpoint(endpoint=f"http://{host}:{bound}", bucket=bucket)
        client = s3.client()
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            client.create_bucket(Bucket=bucket)
        yield s3
    finally:
        _stop(server)


def _stop(server: ThreadedMotoServer, timeout: float = STOP_TIMEOUT_S) -> None:
    # ThreadedMotoServer.stop() joins its thread without a timeout; bound the wait here.
    stopper = threading.Thread(target=server.stop, name="moto-stop", daemon=True)
    stopper.start()
    stopper.join(timeout)
    # stop() leaves the listening socket open, and moto names no public way to close it
    wsgi = getattr(server, "_server", None)  # private: moto's socket, closed here
    if wsgi is not None and not stopper.is_alive():
        wsgi.server_close()
