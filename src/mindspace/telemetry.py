"""The composition root's telemetry: which tracer the engine gets, and the /metrics page.

Telemetry is process-wide, as OpenTelemetry's own providers are: off unless
``MINDSPACE_OTEL=1`` (then built once from the ``OTEL_*`` variables by
:meth:`mindspace.observability.Telemetry.from_environment`), or on with the
:class:`~mindspace.observability.Telemetry` an application gives :func:`use_telemetry`
(its own providers, e.g. the SDK's in-memory exporters in tests). The adapter
(:mod:`mindspace.observability`, the ``otel`` extra) is imported only when telemetry is
on, so a process without it never loads OpenTelemetry. :mod:`mindspace.runtime` and
the hosts call these functions; see docs/observability.md.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mindspace.config import Settings
from mindspace.errors import ConfigError
from mindspace.llm.port import LLM
from mindspace.tracing import NO_TRACER, Tracer

if TYPE_CHECKING:
    from mindspace.observability import Telemetry

__all__ = ["active_telemetry", "build_tracer", "instrument_llm", "metrics_page", "use_telemetry"]

_lock = threading.Lock()
_telemetry: Telemetry | None = None


def use_telemetry(telemetry: Telemetry | None) -> None:
    """Send this process's spans and metrics to ``telemetry`` (None: back to the settings).

    Assistants opened afterwards through :mod:`mindspace.runtime` (``open_assistant``,
    ``mindspace serve``, the worker fleet) are traced; the previous telemetry is not
    shut down (its owner does that).
    """
    global _telemetry
    with _lock:
        _telemetry = telemetry


def active_telemetry(settings: Settings) -> Telemetry | None:
    """The process's telemetry: the one given to :func:`use_telemetry`, else one built
    from the environment when ``settings.otel`` is on, else None.

    Raises:
        ConfigError: OpenTelemetry is on but the ``otel`` extra is missing, or an
            ``OTEL_*`` exporter setting is unknown.
    """
    global _telemetry
    with _lock:
        if _telemetry is None and settings.otel:
            try:
                from mindspace.observability import Telemetry
            except ImportError as exc:
                raise ConfigError(
                    "MINDSPACE_OTEL=1 needs the 'otel' extra: pip install -e '.[otel]' in a "
                    "mindspace clone "
                    f"(missing: {exc.name or exc}), or unset MINDSPACE_OTEL."
                ) from None
            _telemetry = Telemetry.from_environment()
        return _telemetry


def build_tracer(settings: Settings) -> Tracer:
    """The tracer the engine should call: OpenTelemetry's when on, else the no-op one."""
    telemetry = active_telemetry(settings)
    return telemetry.tracer if telemetry is not None else NO_TRACER


def instrument_llm(llm: LLM, settings: Settings) -> LLM:
    """``llm`` with each call traced when telemetry is on (as is otherwise, or if traced).

    ``gen_ai.system`` is the configured provider's name (``MINDSPACE_LLM_PROVIDER``), and
    ``gen_ai.request.model`` the model's ``model`` attribute or ``MINDSPACE_LLM_MODEL``.
    """
    telemetry = active_telemetry(settings)
    if telemetry is None:
        return llm
    return telemetry.wrap_llm(llm, system=settings.resolved_llm_provider, model=settings.llm_model)


def metrics_page(settings: Settings) -> tuple[bytes, str] | None:
    """The Prometheus text page and its content type; None when metrics are not served.

    Metrics are served when telemetry is on and ``OTEL_METRICS_EXPORTER`` includes
    ``prometheus`` (its default).
    """
    telemetry = active_telemetry(settings)
    return telemetry.metrics_page() if telemetry is not None else None
