"""The OpenAI-compatible embedder against a small real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from mindspace.embeddings import Embedder
from mindspace.embeddings.openai_compat import OpenAICompatibleEmbedder
from mindspace.errors import ConfigError, EmbeddingError


@dataclass
class Failure:
    status: int
    message: str = "boom"
    headers: dict[str, str] = field(default_factory=dict)


class EmbeddingServer(ThreadingHTTPServer):
    """Answers POST /v1/embeddings in the OpenAI format; behaviour set per test."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.dim = 4
        self.requests: list[dict[str, Any]] = []
        self.failures: list[Failure] = []  # answered first, one per request
        self.delay = 0.0
        self.reverse = False  # send data items in reverse index order
        self.drop_last = False  # send one vector too few
        self.nan = False
        self.connections = 0  # TCP connections accepted (a keep-alive client reuses one)

    def get_request(self) -> tuple[Any, Any]:
        self.connections += 1
        return super().get_request()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the timeout test hangs up
            super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def vector_for(text: str, dim: int) -> list[float]:
    """A deterministic, text-dependent, unnormalised vector."""
    h = zlib.crc32(text.encode())
    return [float(((h >> (3 * j)) & 7) + 1) for j in range(dim)]


class _Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer
    # As real servers do: the connection stays open between requests.
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv = self.server
        srv.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if srv.delay:
            time.sleep(srv.delay)
        if srv.failures:
            failure = srv.failures.pop(0)
            error = {"error": {"message": failure.message, "type": "test", "code": None}}
            self._send(failure.status, error, failure.headers)
            return
        if self.path != "/v1/embeddings":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "test"}})
            return
        texts = body["input"]
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float("nan")] * srv.dim if srv.nan else vector_for(t, srv.dim),
            }
            for i, t in enumerate(texts)
        ]
        if srv.reverse:
            data.reverse()
        if srv.drop_last:
            data.pop()
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        self._send(200, {"object": "list", "data": data, "model": body["model"], "usage": usage})

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    srv = EmbeddingServer()
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(server: EmbeddingServer, **kwargs: Any) -> OpenAICompatibleEmbedder:
    kwargs.setdefault("sleep", Sleeps())
    return OpenAICompatibleEmbedder(base_url=server.url, model="embed-test", **kwargs)


def expected(texts: list[str], dim: int) -> np.ndarray:
    rows = np.asarray([vector_for(t, dim) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_embeds_and_normalises(server: EmbeddingServer) -> None:
    embedder = make(server, api_key="sk-test")
    texts = ["alpha", "beta gamma"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, 4)
    np.testing.assert_allclose(vectors, expected(texts, 4), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    (request,) = server.requests
    assert request["path"] == "/v1/embeddings"
    assert request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "embed-test"
    assert request["body"]["input"] == texts
    assert request["body"]["encoding_format"] == "float"
    assert embedder.name == "embed-test"


def test_the_client_keeps_its_connection_between_requests(server: EmbeddingServer) -> None:
    embedder = make(server)
    for text in ("one", "two", "three"):
        embedder.embed([text])
    assert len(server.requests) == 3
    assert server.connections == 1


def test_dim_is_learned_from_the_first_response(server: EmbeddingServer) -> None:
    server.dim = 7
    embedder = make(server)
    embedder.embed(["x"])
    assert embedder.dim == 7
    assert len(server.requests) == 1  # no extra request to learn it


def test_reading_dim_first_asks_once(server: EmbeddingServer) -> None:
    server.dim = 5
    embedder = make(server)
    assert embedder.dim == 5
    assert embedder.dim == 5
    assert len(server.requests) == 1


def test_a_given_dim_needs_no_request_and_is_checked(server: EmbeddingServer) -> None:
    embedder = make(server, dim=4)
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 4
    assert server.requests == []
    server.dim = 6
    with pytest.raises(EmbeddingError, match=r"6-d vectors, expected 4-d"):
        embedder.embed(["x"])


def test_batches_keep_the_order(server: EmbeddingServer) -> None:
    texts = [f"text number {i}" for i in range(5)]
    vectors = make(server, batch_size=2).embed(texts)
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    np.testing.assert_allclose(vectors, expected(texts, 4), atol=1e-6)


def test_rows_follow_the_index_field_not_the_order(server: EmbeddingServer) -> None:
    server.reverse = True
    texts = ["first", "second", "third"]
    np.testing.assert_allclose(make(server).embed(texts), expected(texts, 4), atol=1e-6)


def test_empty_texts_are_not_sent_and_get_zero_rows(server: EmbeddingServer) -> None:
    embedder = make(server, dim=4)
    vectors = embedder.embed(["", "real", "   "])
    assert server.requests[0]["body"]["input"] == ["real"]
    assert not vectors[0].any()
    assert not vectors[2].any()
    np.testing.assert_allclose(vectors[1], expected(["real"], 4)[0], atol=1e-6)
    assert embedder.embed(["", ""]).shape == (2, 4)
    assert embedder.embed([]).shape == (0, 4)
    assert len(server.requests) == 1


def test_transient_failures_are_retried_with_backoff(server: EmbeddingServer) -> None:
    server.failures = [Failure(500), Failure(502), Failure(429, headers={"Retry-After": "2"})]
    sleeps = Sleeps()
    vectors = make(server, max_retries=3, sleep=sleeps).embed(["ok"])
    assert vectors.shape == (1, 4)
    assert sleeps == [0.5, 1.0, 2.0]
    assert len(server.requests) == 4


def test_retries_are_bounded(server: EmbeddingServer) -> None:
    server.failures = [Failure(503, "overloaded")] * 5
    sleeps = Sleeps()
    with pytest.raises(EmbeddingError, match=r"answered 503: overloaded") as info:
        make(server, max_retries=2, sleep=sleeps).embed(["x"])
    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert server.url in str(info.value)


def test_a_refused_key_is_not_retried(server: EmbeddingServer) -> None:
    server.failures = [Failure(401, "bad key")]
    with pytest.raises(EmbeddingError, match="MINDSPACE_EMBEDDING_API_KEY"):
        make(server, max_retries=3).embed(["x"])
    assert len(server.requests) == 1


def test_not_found_points_at_the_model_and_url(server: EmbeddingServer) -> None:
    server.failures = [Failure(404, "model 'nope' not found")]
    with pytest.raises(EmbeddingError, match="MINDSPACE_EMBEDDING_MODEL") as info:
        make(server).embed(["x"])
    assert "/v1" in str(info.value)


def test_an_unreachable_endpoint_is_a_clear_error() -> None:
    with socket.socket() as sock:  # a port that nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    embedder = OpenAICompatibleEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, sleep=sleeps
    )
    with pytest.raises(EmbeddingError, match=r"Cannot reach.*MINDSPACE_EMBEDDING_BASE_URL"):
        embedder.embed(["x"])
    assert sleeps == [0.5]


def test_a_slow_endpoint_times_out(server: EmbeddingServer) -> None:
    server.delay = 1.0
    with pytest.raises(EmbeddingError, match="did not answer in time"):
        make(server, timeout=0.2, max_retries=0).embed(["x"])


def test_a_wrong_number_of_vectors_is_refused(server: EmbeddingServer) -> None:
    server.drop_last = True
    with pytest.raises(EmbeddingError, match=r"returned 1 vectors for 2 inputs"):
        make(server).embed(["a", "b"])


def test_non_finite_values_are_refused(server: EmbeddingServer) -> None:
    server.nan = True
    with pytest.raises(EmbeddingError, match="NaN"):
        make(server).embed(["a"])


def test_bad_arguments_are_refused(server: EmbeddingServer) -> None:
    with pytest.raises(ConfigError, match="dimension"):
        make(server, dim=0)
    with pytest.raises(ConfigError, match="batch_size"):
        make(server, batch_size=0)


async def test_aembed_matches_embed_and_keeps_its_connection(server: EmbeddingServer) -> None:
    embedder = make(server)
    texts = ["alpha", "", "beta gamma"]
    vectors = await embedder.aembed(texts)
    np.testing.assert_allclose(vectors[[0, 2]], expected(["alpha", "beta gamma"], 4), atol=1e-6)
    assert not vectors[1].any()  # blank texts are not sent and get zeros, as in embed()
    await embedder.aembed(["again"])
    assert [r["body"]["input"] for r in server.requests] == [["alpha", "beta gamma"], ["again"]]
    assert server.connections == 1


async def test_aembed_retries_wait_without_blocking_the_event_loop(
    server: EmbeddingServer,
) -> None:
    """Two 500s, then vectors: the retry waits (0.05 s, then 0.1 s) let other work run."""
    server.failures = [Failure(500), Failure(500)]
    # The sync sleeper fails the test if the async path ever blocks the thread with it.
    embedder = make(server, backoff=0.05, sleep=_never_sleeps)
    beats = 0
    stop = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal beats
        while not stop.is_set():
            beats += 1
            await asyncio.sleep(0.005)

    beating = asyncio.create_task(heartbeat())
    started = time.perf_counter()
    vectors = await embedder.aembed(["after two failures"])
    waited = time.perf_counter() - started
    stop.set()
    await beating
    np.testing.assert_allclose(vectors, expected(["after two failures"], 4), atol=1e-6)
    assert len(server.requests) == 3
    assert waited >= 0.15  # both backoffs were waited out
    # The loop ran the heartbeat throughout the 0.15 s of backoff (one beat per 5 ms).
    assert beats >= 10, f"the heartbeat ran {beats} times in {waited:.2f} s"


async def test_aembed_gives_up_after_max_retries(server: EmbeddingServer) -> None:
    server.failures = [Failure(503), Failure(503)]
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    embedder = make(server, max_retries=1, backoff=0.5, async_sleep=record)
    with pytest.raises(EmbeddingError, match="answered 503"):
        await embedder.aembed(["x"])
    assert waits == [0.5]
    assert len(server.requests) == 2


def _never_sleeps(seconds: float) -> None:
    raise AssertionError(f"time.sleep({seconds!r}) on the async path")
