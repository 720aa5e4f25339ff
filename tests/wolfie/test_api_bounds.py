"""REST bounds (issue 42), with a real HTTP client against a spawned ``wolfie api``: a
knowledge position past 64 bits and a title past ``max_text_chars`` are one-line 4xx
answers (never a 500), a chunked body over the limit is 413 as a sized one is, a
keep-alive connection serves the next request after a refused one, and the OpenAPI
schema lists the error answers of every route."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from packs import Pack
from tests.support.api_server import api_server
from tests.wolfie.test_api import error_of
from wolfie.api.app import MAX_BODY_BYTES

pytestmark = pytest.mark.slow

KNOWLEDGE = "/v1/packs/desk/knowledge"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("api-bounds")
    with Pack.open("desk", root, settings={"max_text_chars": 1_000}):
        pass
    with api_server(root, "desk") as url, httpx.Client(base_url=url, timeout=120) as client:
        yield client


def chunk(**fields: object) -> dict[str, object]:
    return {"chunks": [{"text": "Rack B by the gate", "source": "notes.md", **fields}]}


def client_port(response: httpx.Response) -> int:
    """The local port of the connection that carried ``response`` (httpcore's documented
    ``network_stream`` extension): the same port, the same connection."""
    return int(response.extensions["network_stream"].get_extra_info("client_addr")[1])


def test_a_position_past_64_bits_is_refused_and_the_connection_serves_on(api: httpx.Client):
    stored = api.post(KNOWLEDGE, json=chunk(position=2**63 - 1))
    assert stored.status_code == 200
    port = client_port(stored)
    for position in (2**63, 2**64 + 5, 10**30):
        refused = api.post(KNOWLEDGE, json=chunk(position=position))
        assert refused.status_code == 422, refused.text
        assert "position" in error_of(refused)["message"]
        assert refused.headers.get("connection") != "close"
        served = api.get("/v1/packs/desk/maturity")
        assert served.status_code == 200
        assert client_port(refused) == client_port(served) == port  # one connection


def test_a_title_past_max_text_chars_is_refused(api: httpx.Client):
    refused = api.post(KNOWLEDGE, json=chunk(position=1, title="t" * 1_001))
    assert refused.status_code == 400 and error_of(refused)["type"] == "TextTooLong"
    assert api.post(KNOWLEDGE, json=chunk(position=1, title="t" * 1_000)).status_code == 200


def test_a_chunked_body_over_the_limit_is_413(api: httpx.Client):
    def body() -> Iterator[bytes]:
        yield b'{"chunks": [{"text": "'
        piece = b"x" * (1 << 20)
        for _ in range((MAX_BODY_BYTES >> 20) + 2):
            yield piece
        yield b'", "source": "s", "position": 0}]}'

    refused = api.post(KNOWLEDGE, content=body(), headers={"content-type": "application/json"})
    assert refused.status_code == 413, refused.text
    assert error_of(refused)["type"] == "BodyTooLarge"
    assert api.get("/v1/packs/desk/maturity").status_code == 200


def test_the_schema_lists_the_error_answers_of_every_route(api: httpx.Client):
    schema = api.get("/openapi.json").json()
    for path, operations in schema["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            answers = operation["responses"]
            for status in ("400", "404", "413", "422", "503"):
                assert status in answers, (method, path, status)
                ref = answers[status]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorBody"), (method, path, status)
