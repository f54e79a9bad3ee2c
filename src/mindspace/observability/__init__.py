"""OpenTelemetry traces and metrics for mindspace (the ``otel`` extra).

An adapter of the tracing port (:mod:`mindspace.tracing`): :class:`Telemetry` holds the
providers and exporters, its :attr:`~Telemetry.tracer` is what the engine calls, and
:meth:`~Telemetry.wrap_llm` traces model calls. :mod:`mindspace.runtime` builds one
when ``MINDSPACE_OTEL=1`` (or uses the one given to
:func:`mindspace.runtime.use_telemetry`); see docs/observability.md.
"""

from __future__ import annotations

from mindspace.observability.otel import INSTRUMENTATION_SCOPE, OtelTracer
from mindspace.observability.setup import Telemetry

__all__ = ["INSTRUMENTATION_SCOPE", "OtelTracer", "Telemetry"]
