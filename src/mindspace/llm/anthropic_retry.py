"""Which ``anthropic`` SDK errors are worth a retry, and their readable detail.

The same bounded policy as the OpenAI-compatible adapters
(:mod:`mindspace.llm.retry_policy`): connection failures, connect timeouts, 429, 5xx
and Anthropic's own ``529 overloaded_error`` are retried with backoff (or the server's
``retry-after``); a read timeout at most once; any other 4xx never.
"""

from __future__ import annotations

import anthropic

from mindspace.llm.retry_policy import TimeoutKind, body_message, timeout_kind_of

__all__ = ["error_detail", "is_transient", "timeout_kind"]


def is_transient(exc: anthropic.APIError) -> bool:
    """429, 5xx (529 included), timeouts and connection failures may succeed on a retry."""
    if isinstance(exc, anthropic.APIConnectionError | anthropic.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, anthropic.APIStatusError) and exc.status_code >= 500


def timeout_kind(exc: BaseException) -> TimeoutKind | None:
    """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server."""
    return timeout_kind_of(exc, anthropic.APITimeoutError)


def error_detail(exc: anthropic.APIStatusError) -> str:
    """The error answer's own message: ``{"type": "error", "error": {"message": ...}}``."""
    return body_message(exc.body, exc.message)
