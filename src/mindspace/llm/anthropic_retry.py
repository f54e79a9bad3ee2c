"""Which ``anthropic`` SDK errors are worth a retry, and their readable detail.

The same bounded policy as the OpenAI-compatible adapters
(:mod:`mindspace.llm.retry_policy`): connection failures, connect timeouts, 429, 5xx
and Anthropic's own ``529 overloaded_error`` are retried with backoff (or the server's
``retry-after``); a read timeout at most once; any other 4xx never.
"""

from __future__ import annotations

import anthropic

from mindspace.llm.retry_policy import TimeoutKind

__all__ = ["error_detail", "is_transient", "timeout_kind"]


def is_transient(exc: anthropic.APIError) -> bool:
    """429, 5xx (529 included), timeouts and connection failures may succeed on a retry."""
    if isinstance(exc, anthropic.APIConnectionError | anthropic.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, anthropic.APIStatusError) and exc.status_code >= 500


def timeout_kind(exc: BaseException) -> TimeoutKind | None:
    """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server.

    The SDK raises one ``APITimeoutError`` for both and chains the HTTP library's own
    exception; it is matched by name because the SDK may use ``httpx`` or ``httpx2``.
    """
    if not isinstance(exc, anthropic.APITimeoutError):
        return None
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ in ("ConnectTimeout", "PoolTimeout"):
        return "connect"
    return "read"


def error_detail(exc: anthropic.APIStatusError) -> str:
    """The error answer's own message: ``{"type": "error", "error": {"message": ...}}``."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return exc.message
