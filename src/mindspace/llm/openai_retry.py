"""What both OpenAI-compatible adapters (chat and embeddings) share about failures.

Which errors are worth a retry, how long to wait before it, and the readable detail of
an error answer. Each adapter maps errors to its own exception family.
"""

from __future__ import annotations

import openai

__all__ = ["MAX_BACKOFF", "error_detail", "is_transient", "retry_delay"]

MAX_BACKOFF = 30.0
"""The longest wait before a retry, in seconds."""


def is_transient(exc: openai.APIError) -> bool:
    """429, 5xx, timeouts and connection failures may succeed on a retry; nothing else."""
    if isinstance(exc, openai.APIConnectionError | openai.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def retry_delay(exc: openai.APIError, attempt: int, backoff: float) -> float:
    """The server's ``Retry-After`` if it sent one, else ``backoff * 2**attempt`` (capped)."""
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    if header is not None:
        try:
            return min(MAX_BACKOFF, float(header))
        except ValueError:
            pass
    return min(MAX_BACKOFF, float(backoff * 2**attempt))


def error_detail(exc: openai.APIStatusError) -> str:
    """The error answer's own message (the SDK's repeats the status code)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return exc.message
