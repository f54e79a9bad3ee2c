"""Telemetry for one process: the OpenTelemetry providers, their exporters, the tracer.

:meth:`Telemetry.from_environment` reads the standard ``OTEL_*`` variables:

- ``OTEL_TRACES_EXPORTER``: ``otlp``, ``console`` or ``none`` (comma-separated for
  several). Default: ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
  ``..._TRACES_ENDPOINT``) is set, else ``none``. OTLP needs the package
  ``opentelemetry-exporter-otlp-proto-http`` (or ``-grpc`` with
  ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc``), which reads its own ``OTEL_EXPORTER_OTLP_*``.
- ``OTEL_METRICS_EXPORTER``: ``prometheus`` (the default: served at ``/metrics`` by
  ``mindspace serve``), ``otlp``, ``console`` or ``none``.
- ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``: the resource (service name
  ``mindspace`` unless set).

When the process already has an SDK tracer provider (set by the embedding
application or ``opentelemetry-instrument``), spans go there and no exporter is added.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from mindspace.errors import ConfigError
from mindspace.llm.port import LLM
from mindspace.llm.traced import TracedLLM
from mindspace.observability.otel import OtelTracer

__all__ = ["Telemetry"]

_TRACE_EXPORTERS = ("otlp", "console", "none")
_METRIC_EXPORTERS = ("prometheus", "otlp", "console", "none")


class Telemetry:
    """The process's tracer and metrics, and the Prometheus page when one is kept.

    Args:
        tracer_provider: Where spans go (the global provider when None).
        meter_provider: Where metrics go (the global provider when None).
        prometheus: The registry a ``PrometheusMetricReader`` of ``meter_provider``
            writes to; :meth:`metrics_page` renders it (None: no ``/metrics``).

    Example:
        >>> spans = InMemorySpanExporter()
        >>> provider = TracerProvider()
        >>> provider.add_span_processor(SimpleSpanProcessor(spans))
        >>> use_telemetry(Telemetry(tracer_provider=provider))
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        prometheus: CollectorRegistry | None = None,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.prometheus = prometheus
        self.tracer = OtelTracer(tracer_provider, meter_provider)

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> Telemetry:
        """Telemetry configured by the ``OTEL_*`` variables (see the module's docs).

        ``environ`` (the process's environment when None) chooses the exporters; the
        resource and the OTLP exporters' own settings always come from the process's.

        Raises:
            ConfigError: an unknown exporter name, or OTLP without its package.
        """
        env = dict(os.environ if environ is None else environ)
        resource = _resource()
        tracer_provider: trace.TracerProvider
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            tracer_provider = current  # the application's own: add nothing to it
        else:
            sdk_provider = TracerProvider(resource=resource)
            for exporter in _span_exporters(env):
                sdk_provider.add_span_processor(BatchSpanProcessor(exporter))
            tracer_provider = sdk_provider
        readers: list[MetricReader] = []
        registry: CollectorRegistry | None = None
        for name in _names(env, "OTEL_METRICS_EXPORTER", "prometheus", _METRIC_EXPORTERS):
            if name == "prometheus":
                from opentelemetry.exporter.prometheus import PrometheusMetricReader

                registry = CollectorRegistry(auto_describe=True)
                readers.append(PrometheusMetricReader(registry=registry))
            elif name == "otlp":
                exporter = _otlp(env, "metric_exporter", "OTLPMetricExporter")
                readers.append(PeriodicExportingMetricReader(exporter))
            elif name == "console":
                readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        return cls(
            tracer_provider=tracer_provider, meter_provider=meter_provider, prometheus=registry
        )

    def wrap_llm(self, llm: LLM, *, system: str, model: str | None = None) -> LLM:
        """``llm`` with each call traced (returned as is when it is traced already)."""
        if isinstance(llm, TracedLLM):
            return llm
        return TracedLLM(llm, self.tracer, system=system, model=model)

    def metrics_page(self) -> tuple[bytes, str] | None:
        """The metrics in the Prometheus text format and its content type; None when off."""
        if self.prometheus is None:
            return None
        return generate_latest(self.prometheus), CONTENT_TYPE_LATEST

    def shutdown(self) -> None:
        """Flush and stop the exporters this telemetry owns."""
        if self.meter_provider is not None:
            self.meter_provider.shutdown()
        # An application's own (global) tracer provider is its to stop, not ours.
        if self.tracer_provider is not trace.get_tracer_provider():
            stop: Callable[[], Any] | None = getattr(self.tracer_provider, "shutdown", None)
            if stop is not None:
                stop()


def _resource() -> Resource:
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "mindspace"}))
    return resource


def _names(env: dict[str, str], variable: str, default: str, known: tuple[str, ...]) -> list[str]:
    value = env.get(variable, "").strip() or default
    names = [n.strip().lower() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"{variable}={value!r} names no exporter mindspace knows ({', '.join(unknown)}); "
            f"use one or more of {', '.join(known)}."
        )
    return [n for n in names if n != "none"]


def _span_exporters(env: dict[str, str]) -> list[SpanExporter]:
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    default = "otlp" if endpoint else "none"
    exporters: list[SpanExporter] = []
    for name in _names(env, "OTEL_TRACES_EXPORTER", default, _TRACE_EXPORTERS):
        if name == "otlp":
            exporters.append(_otlp(env, "trace_exporter", "OTLPSpanExporter"))
        else:
            exporters.append(ConsoleSpanExporter())
    return exporters


def _otlp(env: dict[str, str], module: str, cls: str) -> Any:
    """An OTLP exporter from the http (default) or grpc package, with its env settings."""
    protocol = env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip()
    transport = "grpc" if protocol == "grpc" else "http"
    package = f"opentelemetry.exporter.otlp.proto.{transport}.{module}"
    try:
        exporter_module = importlib.import_module(package)
    except ImportError:
        raise ConfigError(
            f"OTLP export over {transport} needs the package "
            f"'opentelemetry-exporter-otlp-proto-{transport}': pip install it, or set "
            "OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER to 'console' or 'none'."
        ) from None
    return getattr(exporter_module, cls)()
