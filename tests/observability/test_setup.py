"""Telemetry from the OTEL_* variables, and the traced model standing in for the real one."""

from __future__ import annotations

import pytest

from mindspace import ConfigError, OfflineLLM, ScriptedLLM, Settings
from mindspace.llm.port import close_llm
from mindspace.llm.traced import TracedLLM
from mindspace.observability import Telemetry
from mindspace.runtime import build_llm, is_offline, use_telemetry

from .conftest import Recorded


def test_by_default_metrics_are_kept_for_prometheus() -> None:
    telemetry = Telemetry.from_environment({})
    try:
        with telemetry.tracer.span("tick", "mindspace.tick", {"mindspace.assistant": "a"}) as span:
            span.set("mindspace.tick.status", "done")
        page = telemetry.metrics_page()
        assert page is not None
        body, content_type = page
        assert content_type.startswith("text/plain")
        assert b'service_name="mindspace"' in body
        assert b'mindspace_ticks_total{mindspace_assistant="a",mindspace_tick_status="done"' in body
    finally:
        telemetry.shutdown()


def test_without_prometheus_there_is_no_metrics_page() -> None:
    telemetry = Telemetry.from_environment(
        {"OTEL_METRICS_EXPORTER": "none", "OTEL_TRACES_EXPORTER": "console"}
    )
    try:
        assert telemetry.metrics_page() is None
    finally:
        telemetry.shutdown()


@pytest.mark.parametrize(
    ("variable", "value"), [("OTEL_METRICS_EXPORTER", "statsd"), ("OTEL_TRACES_EXPORTER", "zipkin")]
)
def test_an_unknown_exporter_is_refused_with_the_known_ones(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"{variable}='{value}'.*use one or more of"):
        Telemetry.from_environment({variable: value})


def test_a_bad_otel_setting_stops_building_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    use_telemetry(None)
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "statsd")
    with pytest.raises(ConfigError, match="statsd"):
        build_llm(Settings(otel=True))
    monkeypatch.delenv("OTEL_METRICS_EXPORTER")
    assert not isinstance(build_llm(Settings()), TracedLLM)  # nothing half-built was kept


async def test_the_traced_model_is_still_the_model(recorded: Recorded) -> None:
    settings = Settings()
    traced = build_llm(settings)
    assert isinstance(traced, TracedLLM)
    assert isinstance(traced.inner, OfflineLLM)
    assert is_offline(traced)
    assert traced.model == "mindspace-offline"  # type: ignore[attr-defined]
    assert recorded.telemetry.wrap_llm(traced, system="offline") is traced  # not twice

    closed: list[bool] = []
    scripted = ScriptedLLM()
    scripted.aclose = lambda: _record(closed)  # type: ignore[attr-defined]
    await close_llm(recorded.telemetry.wrap_llm(scripted, system="scripted"))
    assert closed == [True]


async def _record(closed: list[bool]) -> None:
    closed.append(True)
