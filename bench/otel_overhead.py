"""What OpenTelemetry costs a tick: the same event ticks with telemetry off and on. Prints JSON.

Each tick answers a message with two model calls (a scripted model that answers at once)
and one tool call (add_goal), so it opens four spans when telemetry is on. "off" is the
default (the no-op tracer, the model unwrapped); "on" is the OpenTelemetry SDK with a
batch span processor into an in-memory exporter and a Prometheus metric reader, the
Prometheus page rendered once at the end. The two assistants tick in alternating rounds
so that a change of machine load hits both. Also measured: one empty span, no-op vs SDK.

Usage::

    python bench/otel_overhead.py [--ticks 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings, open_assistant
from mindspace.llm import Usage
from mindspace.observability import Telemetry
from mindspace.runtime import use_telemetry
from mindspace.tracing import NO_TRACER, Tracer

START = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)


def _telemetry() -> tuple[Telemetry, InMemorySpanExporter]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(spans))
    registry = CollectorRegistry(auto_describe=True)
    meter_provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider, prometheus=registry
    )
    return telemetry, spans


def _open(workdir: Path, name: str, llm: ScriptedLLM) -> Assistant:
    settings = Settings(data_dir=workdir, llm_provider="scripted", embedder="hashing")
    return open_assistant(
        name, settings=settings, db=workdir / f"{name}.db", llm=llm, clock=ManualClock(START)
    )


async def _tick(assistant: Assistant, llm: ScriptedLLM, n: int) -> float:
    llm.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": f"Restock barrel {n}"}}],
        usage=Usage(prompt_tokens=900, completion_tokens=20),
    )
    llm.enqueue("On it.", usage=Usage(prompt_tokens=950, completion_tokens=4))
    assistant.enqueue_event(f"Barrel {n} is empty!", source_entity="Alice")
    started = time.perf_counter()
    result = await assistant.tick()
    elapsed = time.perf_counter() - started
    assert result.status == "done", result.error
    return elapsed


def _span_cost(tracer: Tracer, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        with tracer.span("tool_call", "execute_tool noop", {"gen_ai.tool.name": "noop"}) as span:
            span.set("mindspace.tool.success", True)
    return (time.perf_counter() - started) / n


async def main(ticks: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        off_llm, on_llm = ScriptedLLM(), ScriptedLLM()
        use_telemetry(None)
        off = _open(workdir, "off", off_llm)
        telemetry, spans = _telemetry()
        use_telemetry(telemetry)
        on = _open(workdir, "on", on_llm)
        use_telemetry(None)
        times: dict[str, list[float]] = {"off": [], "on": []}
        n = 0
        for assistant, llm in ((off, off_llm), (on, on_llm)):
            for _ in range(5):  # warm-up
                n += 1
                await _tick(assistant, llm, n)
        per_round = max(1, ticks // rounds)
        for _ in range(rounds):
            for assistant, llm, mode in ((off, off_llm, "off"), (on, on_llm, "on")):
                for _ in range(per_round):
                    n += 1
                    times[mode].append(await _tick(assistant, llm, n))
        started = time.perf_counter()
        page = telemetry.metrics_page()
        render_ms = (time.perf_counter() - started) * 1000
        telemetry.tracer_provider.force_flush()  # type: ignore[union-attr]
        exported = len(spans.get_finished_spans())
        span_noop = _span_cost(NO_TRACER, 20_000)
        span_sdk = _span_cost(telemetry.tracer, 20_000)
        telemetry.shutdown()
    off_p50 = statistics.median(times["off"]) * 1000
    on_p50 = statistics.median(times["on"]) * 1000
    return {
        "ticks_per_mode": len(times["off"]),
        "tick_p50_ms": {"off": round(off_p50, 2), "on": round(on_p50, 2)},
        "tick_p95_ms": {
            mode: round(statistics.quantiles(values, n=20)[18] * 1000, 2)
            for mode, values in times.items()
        },
        "overhead_p50_ms": round(on_p50 - off_p50, 2),
        "overhead_p50_percent": round(100 * (on_p50 - off_p50) / off_p50, 1),
        "spans_exported": exported,
        "prometheus_page_bytes": len(page[0]) if page else 0,
        "prometheus_render_ms": round(render_ms, 2),
        "span_us": {"noop": round(span_noop * 1e6, 2), "sdk": round(span_sdk * 1e6, 2)},
        "loadavg": os.getloadavg()[0],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=200, help="measured ticks per mode")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.ticks, args.rounds)), indent=2))
