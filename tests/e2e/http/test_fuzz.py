"""A schema-driven fuzzer: schemathesis generates requests from the OpenAPI schema and sends
them to a real uvicorn server on 127.0.0.1; no request may get a 5xx.

Path keys are pointed at one real assistant, so the operations reach the engine (tools
with generated arguments, events, ticks, sleep and wake) instead of stopping at a 404.
Examples are bounded per operation so the run stays short.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore

TOKEN = "fuzzing-token-0123456789abcdef"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
EXAMPLES = 25


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory, live_server_type: Any) -> Iterator[str]:
    """A secured server on loopback with the assistant 'barkeep'."""
    folder = tmp_path_factory.mktemp("fuzz")
    store = SqlStore.from_path(folder / "fuzz.db")
    hub = AssistantHub(
        Runtime(
            Settings(data_dir=folder),
            store,
            llm=OfflineLLM(announce=False),
            clock=ManualClock(),
            embedder=HashingEmbedder(256),
            owns_store=False,
        )
    )
    hub.create("barkeep")
    server = ServerSettings(api_token=TOKEN, api_tokens=None, api_max_body_bytes=65_536)
    live = live_server_type(create_app(hub, server=server, background_ticks=False)).start()
    try:
        yield live.url
    finally:
        live.stop()
        store.close()


def test_no_request_gets_a_server_error(fuzz_server: str) -> None:
    api = schemathesis.openapi.from_url(f"{fuzz_server}/openapi.json")
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) > 40  # every route, and every built-in tool's own path
    # The live stream never ends by itself; test_stream_and_ticker.py covers it.
    operations = [op for op in operations if not op.path.endswith("/stream")]
    sent: list[int] = []

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def check(case: Any) -> None:
            if "key" in (case.path_parameters or {}):
                case.path_parameters["key"] = "barkeep"
            response = case.call(base_url=fuzz_server, headers=HEADERS, timeout=30)
            sent.append(response.status_code)
            assert response.status_code < 500, (
                f"{case.method} {case.formatted_path} -> {response.status_code}: "
                f"{response.text[:500]}"
            )
            content_type = response.headers.get("content-type") or [""]
            if response.status_code >= 400 and content_type[0].startswith("application/json"):
                body = response.json()
                assert body["success"] is False
                assert body["error"]

        check()
    assert len(sent) >= len(operations)
    assert any(200 <= status < 300 for status in sent)
