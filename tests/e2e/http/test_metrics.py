"""GET /metrics: Prometheus metrics from a real server when MINDSPACE_OTEL=1, else 404."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from mindspace import ScriptedLLM, Settings
from mindspace.hosts.http import ServerSettings, create_app
from mindspace.hosts.http.app import build_hub
from mindspace.llm import Usage
from mindspace.runtime import use_telemetry
from mindspace.telemetry import active_telemetry

from .conftest import TOKEN_ALICE, TOKEN_ALL, LiveServer


@pytest.fixture
def otel_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """MINDSPACE_OTEL=1 with the default exporters (Prometheus); telemetry off afterwards."""
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    use_telemetry(None)
    settings = Settings(data_dir=tmp_path, otel=True, llm_provider="scripted", embedder="hashing")
    yield settings
    built = active_telemetry(settings)
    use_telemetry(None)
    if built is not None:
        built.shutdown()


def _sample(page: str, metric: str, **labels: str) -> float:
    """The value of the one sample of ``metric`` whose labels include ``labels``."""
    values = []
    for line in page.splitlines():
        match = re.fullmatch(rf"{metric}\{{(.*)\}} (\S+)", line)
        if match and all(f'{k}="{v}"' in match.group(1) for k, v in labels.items()):
            values.append(float(match.group(2)))
    assert len(values) == 1, f"{metric} {labels}: {values}\n{page}"
    return values[0]


def test_a_real_server_serves_prometheus_metrics_of_its_ticks(
    otel_settings: Settings,
    tmp_path: Path,
    server_settings: Callable[..., ServerSettings],
    live_server: Callable[[FastAPI], LiveServer],
) -> None:
    llm = ScriptedLLM(model="tavern-7b")
    llm.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Restock the cellar"}}],
        usage=Usage(prompt_tokens=100, completion_tokens=12),
    )
    llm.enqueue("On it.", usage=Usage(prompt_tokens=130, completion_tokens=4))
    hub = build_hub(otel_settings, db=tmp_path / "m.db", llm=llm)
    server = server_settings(api_token=TOKEN_ALL, api_tokens=f"{TOKEN_ALICE}=alice")
    live = live_server(create_app(hub, server=server, background_ticks=False))
    everyone = {"Authorization": f"Bearer {TOKEN_ALL}"}
    with httpx.Client(base_url=live.url, headers=everyone, timeout=30) as client:
        assert client.post("/v1/assistants", json={"key": "alice"}).status_code == 201
        sent = client.post("/v1/assistants/alice/events", json={"content": "Cellar's empty!"})
        assert sent.status_code == 202, sent.text
        ticked = client.post("/v1/assistants/alice/tick")
        assert ticked.status_code == 200, ticked.text

        response = client.get("/metrics")
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/plain")
        page = response.text
        done = {"mindspace_assistant": "alice", "mindspace_tick_status": "done"}
        assert _sample(page, "mindspace_ticks_total", **done) == 1
        assert _sample(page, "mindspace_tick_duration_seconds_count", **done) == 1
        assert _sample(page, "mindspace_llm_calls_total", gen_ai_request_model="tavern-7b") == 2
        assert _sample(page, "mindspace_llm_tokens_total", gen_ai_token_type="input") == 230
        assert _sample(page, "mindspace_llm_tokens_total", gen_ai_token_type="output") == 16
        added = {"gen_ai_tool_name": "add_goal", "mindspace_tool_success": "true"}
        assert _sample(page, "mindspace_tool_calls_total", **added) == 1
        assert 'service_name="mindspace"' in page  # the resource, as target_info

        # the metrics name every assistant: only a token for all of them may read them
        anonymous = httpx.get(f"{live.url}/metrics", timeout=30)
        assert anonymous.status_code == 401
        alice_only = {"Authorization": f"Bearer {TOKEN_ALICE}"}
        refused = httpx.get(f"{live.url}/metrics", headers=alice_only, timeout=30)
        assert refused.status_code == 403
        assert refused.json()["success"] is False
        assert "'*'" in refused.json()["suggestion"]


async def test_metrics_are_a_404_when_opentelemetry_is_off(client: httpx.AsyncClient) -> None:
    response = await client.get("/metrics")
    assert response.status_code == 404
    body = response.json()
    assert body["success"] is False
    assert "MINDSPACE_OTEL=1" in body["suggestion"]
