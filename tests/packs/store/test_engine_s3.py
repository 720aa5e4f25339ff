"""The Pack API end to end on ``s3://`` roots against a real (moto) S3 endpoint.

Every engine check runs twice: with explicit ``storage_options`` and with the ``AWS_*``
variables. The checks are shared with ``scripts/check_engine.py``
(``tests/support/engine_checks.py``). The last tests pin down what happens when the
endpoint can't be reached.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from packs import Pack
from packs.errors import is_transient
from tests.support import engine_checks as checks
from tests.support.s3 import S3Endpoint, moto_s3

pytestmark = pytest.mark.s3


@pytest.fixture(params=["options", "env"])
def target(request: pytest.FixtureRequest, s3: S3Endpoint) -> checks.PackTarget:
    """A fresh root on the session's moto server, reached by storage options or AWS_* env."""
    root = s3.fresh_root(request.param)
    if request.param == "options":
        return checks.PackTarget("s3-options", root, storage_options=s3.storage_options)
    return checks.PackTarget("s3-env", root, env=s3.env)


def test_a_paraphrase_merges_and_an_unrelated_intent_adds_a_row(target):
    checks.check_dedup(target)


def test_the_most_relevant_chunk_ranks_first(target):
    checks.check_recall_order(target)


def test_feedback_moves_utilities_by_ema_and_they_persist(target):
    checks.check_utility_movement(target)


def test_the_episode_its_candidates_and_its_rewards_are_logged(target):
    checks.check_logged_episode(target)


def test_rewards_reorder_the_ranking(target):
    checks.check_ranking_change(target)


def test_a_read_only_handle_searches_and_refuses_writes(target):
    checks.check_read_only(target)


# --- an endpoint that can't be reached ---------------------------------------------------


def _options(endpoint: str, **extra: str) -> dict[str, str]:
    return {**S3Endpoint(endpoint, "wolfie-test").storage_options, **extra}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An endpoint that accepts TCP connections (the kernel's backlog) and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


def _error_within(call: Callable[[], object], limit_s: float) -> tuple[BaseException, float]:
    """Run ``call`` in a thread; the error it raised and how long it took to raise it."""
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit_s)
    elapsed = time.monotonic() - started
    if thread.is_alive():
        pytest.fail(f"still running after {limit_s:.0f} s")
    if "error" not in outcome:
        pytest.fail("expected an error, but the call succeeded")
    return outcome["error"], elapsed


def test_opening_on_a_closed_port_fails_fast_with_the_endpoint_named():
    """A refused connection fails within seconds with Lance's defaults (measured ~5 s:
    the open lists the namespace manifest 6 times, each with 3 quick retries)."""
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    error, elapsed = _error_within(
        lambda: Pack.open("unreachable", "s3://wolfie-test/x", storage_options=_options(endpoint)),
        limit_s=60,
    )
    assert elapsed < 30
    assert endpoint.removeprefix("http://") in str(error)
    assert "Connection refused" in str(error)


def test_an_unreachable_endpoint_is_a_transient_wolfie_error():
    """Regression: Lance's connection error escaped as a bare ValueError ('Invalid input,
    Failed to connect to namespace'), so Prefect's retry_condition_fn never retried it."""
    options = _options(f"http://127.0.0.1:{_closed_port()}", client_max_retries="0")
    error, _ = _error_within(
        lambda: Pack.open("unreachable", "s3://wolfie-test/x", storage_options=options),
        limit_s=60,
    )
    assert is_transient(error)
    assert "'unreachable'" in str(error) and "list tables" in str(error)


@pytest.mark.slow
def test_a_silent_endpoint_fails_within_the_configured_timeouts(silent_endpoint):
    """With Lance's defaults an endpoint that never answers blocks open() for minutes.

    Measured: over 200 s with the defaults (30 s request timeout, 3 retries, and the open
    lists the namespace manifest 6 times). ``timeout`` / ``connect_timeout`` and
    ``client_max_retries`` bound it: 1 s and 0 retries fail in about 9 s.
    """
    options = _options(silent_endpoint, timeout="1s", connect_timeout="1s", client_max_retries="0")
    error, elapsed = _error_within(
        lambda: Pack.open("silent", "s3://wolfie-test/x", storage_options=options), limit_s=90
    )
    assert elapsed < 45
    assert silent_endpoint.removeprefix("http://") in str(error)


def test_losing_the_endpoint_after_open_fails_the_next_read():
    """Reads on an open Pack fail, not hang, once the endpoint goes away."""
    with moto_s3() as lost:
        options = {**lost.storage_options, "client_max_retries": "0"}
        pack = Pack.open("lost", lost.root, storage_options=options)
        pack.add_knowledge(checks.DOCS)
        assert pack.search(checks.DOCS_QUERY).items
    error, elapsed = _error_within(lambda: pack.search(checks.DOCS_QUERY), limit_s=60)
    assert elapsed < 30
    assert lost.endpoint.removeprefix("http://") in str(error)
    pack.close()  # nothing is buffered, so closing needs no storage
