"""The tracing port on OpenTelemetry: each span of the engine, and the metrics it implies.

:class:`OtelTracer` implements :class:`mindspace.tracing.Tracer`. A span becomes an
OpenTelemetry span (a child of the span current in the task, so one tick's model and
tool calls nest under it), and when it ends, the metrics of its kind are recorded from
its attributes: a tick counts in ``mindspace.ticks``, a model call in
``mindspace.llm.calls`` and its tokens in ``mindspace.llm.tokens`` (and in the GenAI
conventions' ``gen_ai.client.token.usage`` and ``gen_ai.client.operation.duration``), a
tool call in ``mindspace.tool.calls``, a sleep operation in
``mindspace.sleep.operations``, and any failure in ``mindspace.errors``. Metric
attributes are the low-cardinality ones only (never an event id or a message).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind as OtelSpanKind
from opentelemetry.trace import Status, StatusCode

from mindspace import __version__
from mindspace.tracing import AttributeValue, Span, SpanKind

__all__ = ["INSTRUMENTATION_SCOPE", "OtelTracer"]

INSTRUMENTATION_SCOPE = "mindspace"

# Seconds: the GenAI conventions' advice for operation durations (10 ms to ~80 s).
_DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]
# Tokens per call: the conventions' advice (powers of four).
_TOKEN_BUCKETS = [float(4**i) for i in range(14)]

# The attributes each kind's metrics carry (bounded sets of values).
_METRIC_KEYS: dict[SpanKind, tuple[str, ...]] = {
    "tick": (
        "mindspace.assistant",
        "mindspace.mode",
        "mindspace.tick.kind",
        "mindspace.tick.status",
    ),
    "llm_call": ("gen_ai.operation.name", "gen_ai.system", "gen_ai.request.model"),
    "tool_call": (
        "mindspace.assistant",
        "gen_ai.tool.name",
        "mindspace.tool.category",
        "mindspace.tool.success",
    ),
    "sleep_operation": ("mindspace.assistant", "mindspace.sleep.operation"),
}

_OTEL_KINDS: dict[SpanKind, OtelSpanKind] = {
    "tick": OtelSpanKind.INTERNAL,
    "llm_call": OtelSpanKind.CLIENT,  # the conventions: a call to a model is a client span
    "tool_call": OtelSpanKind.INTERNAL,
    "sleep_operation": OtelSpanKind.INTERNAL,
}


class _Span:
    """The port's span over an OpenTelemetry span; keeps the attributes for the metrics."""

    def __init__(self, span: trace.Span, attributes: Mapping[str, AttributeValue]) -> None:
        self.span = span
        self.attributes = dict(attributes)
        self.error_type: str | None = None

    def set(self, key: str, value: AttributeValue) -> None:
        self.attributes[key] = value
        self.span.set_attribute(key, value)

    def fail(self, error_type: str, message: str = "") -> None:
        self.error_type = error_type
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR, message or error_type))


def _duration(meter: metrics.Meter, name: str, description: str) -> metrics.Histogram:
    """A duration histogram: every one is in seconds, on the same buckets."""
    return meter.create_histogram(
        name,
        unit="s",
        description=description,
        explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
    )


class _Instruments:
    """The metric instruments, created once per meter."""

    def __init__(self, meter: metrics.Meter) -> None:
        self.ticks = meter.create_counter(
            "mindspace.ticks", unit="{tick}", description="Ticks run, by mode, kind and status."
        )
        self.tick_duration = _duration(meter, "mindspace.tick.duration", "How long a tick took.")
        self.llm_calls = meter.create_counter(
            "mindspace.llm.calls", unit="{call}", description="Calls to the model."
        )
        self.llm_tokens = meter.create_counter(
            "mindspace.llm.tokens",
            unit="{token}",
            description="Tokens the model read (input) and wrote (output).",
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens per model call (GenAI semantic conventions).",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.llm_duration = _duration(
            meter,
            "gen_ai.client.operation.duration",
            "How long a model call took (GenAI semantic conventions).",
        )
        self.tool_calls = meter.create_counter(
            "mindspace.tool.calls", unit="{call}", description="Tool calls, by tool and success."
        )
        self.sleep_operations = meter.create_counter(
            "mindspace.sleep.operations", unit="{operation}", description="Sleep operations run."
        )
        self.sleep_duration = _duration(
            meter, "mindspace.sleep.operation.duration", "How long a sleep operation took."
        )
        self.errors = meter.create_counter(
            "mindspace.errors",
            unit="{error}",
            description="Failed ticks, model calls, tool calls and sleep operations.",
        )

    def record(self, kind: SpanKind, span: _Span, seconds: float) -> None:
        values = span.attributes
        labels = {k: values[k] for k in _METRIC_KEYS[kind] if k in values}
        if kind == "tick":
            self.ticks.add(1, labels)
            self.tick_duration.record(seconds, labels)
        elif kind == "llm_call":
            if span.error_type is not None:
                labels["error.type"] = span.error_type
            self.llm_calls.add(1, labels)
            self.llm_duration.record(seconds, labels)
            for token_type, key in (
                ("input", "gen_ai.usage.input_tokens"),
                ("output", "gen_ai.usage.output_tokens"),
            ):
                count = values.get(key)
                if isinstance(count, int):
                    typed = {**labels, "gen_ai.token.type": token_type}
                    self.llm_tokens.add(count, typed)
                    self.token_usage.record(count, typed)
        elif kind == "tool_call":
            self.tool_calls.add(1, labels)
        else:
            self.sleep_operations.add(1, labels)
            self.sleep_duration.record(seconds, labels)
        if span.error_type is not None:
            where = {"mindspace.operation": kind, "error.type": span.error_type}
            self.errors.add(1, where)


class OtelTracer:
    """The engine's tracer on OpenTelemetry providers.

    Args:
        tracer_provider: Where spans go (the global provider when None).
        meter_provider: Where metrics go (the global provider when None).
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self._tracer = trace.get_tracer(
            INSTRUMENTATION_SCOPE, __version__, tracer_provider=tracer_provider
        )
        meter = metrics.get_meter(INSTRUMENTATION_SCOPE, __version__, meter_provider)
        self._instruments = _Instruments(meter)

    @contextmanager
    def span(
        self, kind: SpanKind, name: str, attributes: Mapping[str, AttributeValue]
    ) -> Iterator[Span]:
        """An OpenTelemetry span, current for the block; its metrics when it ends."""
        started = time.perf_counter()
        with self._tracer.start_as_current_span(
            name,
            kind=_OTEL_KINDS[kind],
            attributes=dict(attributes),
            record_exception=False,  # recorded below, with error.type
            set_status_on_exception=False,
        ) as otel_span:
            span = _Span(otel_span, attributes)
            try:
                yield span
            except BaseException as exc:
                # Cancellation and crashes alike: the work did not finish.
                otel_span.record_exception(exc)
                span.fail(type(exc).__qualname__, str(exc))
                raise
            finally:
                self._instruments.record(kind, span, time.perf_counter() - started)
