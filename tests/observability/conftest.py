"""OpenTelemetry fixtures: the SDK's in-memory exporters, installed through the runtime."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mindspace import Settings
from mindspace.observability import Telemetry
from mindspace.runtime import use_telemetry


@dataclass
class Recorded:
    """What the process's telemetry recorded: finished spans and a metrics reader."""

    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    telemetry: Telemetry


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    """Telemetry on in-memory exporters for this test (the runtime's, then off again)."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader])
    )
    use_telemetry(telemetry)
    try:
        yield Recorded(spans, reader, telemetry)
    finally:
        use_telemetry(None)
        telemetry.shutdown()


@pytest.fixture
def traced_settings(tmp_path: Path) -> Settings:
    """Settings naming the provider the spans report (the scripted model stands in)."""
    return Settings(data_dir=tmp_path, llm_provider="scripted", embedder="hashing")
