"""The tracing port: where the engine marks the start and end of its work.

The engine opens a span around each tick, tool call and sleep operation, and the LLM
wrapper (:class:`mindspace.llm.traced.TracedLLM`) one around each model call. What a
span becomes is the adapter's business: the OpenTelemetry adapter
(:mod:`mindspace.observability`, wired by :mod:`mindspace.runtime` when
``MINDSPACE_OTEL=1``) turns them into OpenTelemetry spans and metrics. The default,
:data:`NO_TRACER`, does nothing, so the core never depends on a tracing library.

Example:
    >>> attributes = {"gen_ai.tool.name": "add_goal"}
    >>> with tracer.span("tool_call", "execute_tool add_goal", attributes) as span:
    ...     outcome = await run()
    ...     span.set("mindspace.tool.success", outcome.ok)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Literal, Protocol

__all__ = ["NO_TRACER", "AttributeValue", "NoTracer", "Span", "SpanKind", "Tracer"]

SpanKind = Literal["tick", "llm_call", "tool_call", "sleep_operation"]
"""What a span measures; adapters pick their metrics by it."""

AttributeValue = str | bool | int | float | Sequence[str]
"""A span attribute's value (OpenTelemetry's primitive types)."""


class Span(Protocol):
    """An open span: attributes learnt while the work runs, and its failure."""

    def set(self, key: str, value: AttributeValue) -> None:
        """Set the attribute ``key`` (e.g. a token count known only at the end)."""
        ...

    def fail(self, error_type: str, message: str = "") -> None:
        """Mark the work failed without an exception (e.g. a tick whose model failed)."""
        ...


class Tracer(Protocol):
    """Opens spans. An exception leaving the block marks the span failed and is re-raised."""

    def span(
        self, kind: SpanKind, name: str, attributes: Mapping[str, AttributeValue]
    ) -> AbstractContextManager[Span]:
        """A span of ``kind`` named ``name``, a child of the span open in this task."""
        ...


class _NoSpan:
    def set(self, key: str, value: AttributeValue) -> None:
        pass

    def fail(self, error_type: str, message: str = "") -> None:
        pass


class NoTracer:
    """The default tracer: records nothing and costs next to nothing."""

    _span = _NoSpan()

    @contextmanager
    def span(
        self, kind: SpanKind, name: str, attributes: Mapping[str, AttributeValue]
    ) -> Iterator[Span]:
        """A span that records nothing."""
        yield self._span


NO_TRACER: Tracer = NoTracer()
"""The shared no-op tracer."""
