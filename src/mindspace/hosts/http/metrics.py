"""``GET /metrics``: the OpenTelemetry metrics in the Prometheus text format.

Served only when OpenTelemetry is on (``MINDSPACE_OTEL=1`` with the ``otel`` extra,
and ``OTEL_METRICS_EXPORTER`` including ``prometheus``, its default); otherwise 404, as
for any unknown path. The metrics name every assistant, so when the server has tokens
the scrape needs one that may use every assistant (``MINDSPACE_API_TOKEN`` or a ``*``
entry). See docs/observability.md.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mindspace.hosts.http.auth import require_caller
from mindspace.hosts.http.errors import ApiError
from mindspace.runtime import metrics_page

__all__ = ["metrics_router"]

metrics_router = APIRouter()

# Read by hand (not auto_error): with metrics off, the answer is 404 whatever the token.
_bearer = HTTPBearer(auto_error=False)


@metrics_router.get("/metrics", include_in_schema=False)
def metrics(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Response:
    """The Prometheus page, or 404 when metrics are off."""
    page = metrics_page(request.app.state.hub.settings)
    if page is None:
        raise ApiError(
            404,
            "Metrics are off on this server",
            "Start it with MINDSPACE_OTEL=1 (the 'otel' extra: pip install -e '.[otel]' in "
            "a mindspace clone) to serve Prometheus metrics at /metrics; see "
            "docs/observability.md.",
        )
    caller = require_caller(request, credentials)
    if caller.grant is not None and not caller.grant.every:
        raise ApiError(
            403,
            "This token may not read the metrics of every assistant",
            "Scrape /metrics with MINDSPACE_API_TOKEN or a MINDSPACE_API_TOKENS entry "
            "that grants '*'.",
        )
    body, content_type = page
    return Response(content=body, media_type=content_type)
