"""What both OpenAI-compatible adapters (chat and embeddings) share about failures.

Which errors are worth a retry, how long to wait before it, the readable detail of an
error answer, and the text clean-up every request needs at the boundary. Each adapter
maps errors to its own exception family.

The policy is tuned for local models as much as for hosted ones: a local server that
did not answer in time is usually still generating, so a read timeout is retried at
most once (:data:`MAX_READ_TIMEOUT_RETRIES`) instead of queueing more full generations
behind the one it is still working on; connection failures, connect timeouts, 429 and
5xx (a 503 while a model loads) are retried up to the configured count with backoff.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import openai

__all__ = [
    "MAX_BACKOFF",
    "MAX_READ_TIMEOUT_RETRIES",
    "TimeoutKind",
    "error_detail",
    "is_transient",
    "retry_delay",
    "scrub_surrogates",
    "timeout_kind",
]

MAX_BACKOFF = 30.0
"""The longest wait before a retry, in seconds."""

MAX_READ_TIMEOUT_RETRIES = 1
"""Retries after a read timeout: the server is probably still busy with the first one."""

TimeoutKind = Literal["connect", "read"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def is_transient(exc: openai.APIError) -> bool:
    """429, 5xx, timeouts and connection failures may succeed on a retry; nothing else."""
    if isinstance(exc, openai.APIConnectionError | openai.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def timeout_kind(exc: BaseException) -> TimeoutKind | None:
    """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server.

    The SDK raises one ``APITimeoutError`` for both and chains the HTTP library's own
    exception; it is matched by name because the SDK may use ``httpx`` or ``httpx2``.
    """
    if not isinstance(exc, openai.APITimeoutError):
        return None
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ in ("ConnectTimeout", "PoolTimeout"):
        return "connect"
    return "read"


def retry_delay(exc: BaseException, attempt: int, backoff: float) -> float:
    """The server's ``Retry-After`` if it sent one, else ``backoff * 2**attempt`` (capped)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    header = headers.get("retry-after") if headers is not None else None
    if header is not None:
        try:
            return min(MAX_BACKOFF, max(0.0, float(header)))
        except ValueError:
            pass  # an HTTP date or junk: fall back to our own backoff
    return min(MAX_BACKOFF, float(backoff * 2**attempt))


def error_detail(exc: openai.APIStatusError) -> str:
    """The error answer's own message (the SDK's repeats the status code)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return exc.message


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD.

    A lone surrogate (``"\\ud800"``) cannot be encoded as UTF-8, so one stored prompt
    holding it would make every request fail with ``UnicodeEncodeError``. Surrogate
    pairs written as two code points are joined into the character they encode.
    Walks dicts, lists and tuples; other values are returned as they are.
    """
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_surrogates(v) for v in value]
    return value
