"""The retry policy every LLM adapter shares, whatever its SDK: how long to wait, how often.

The policy is tuned for local models as much as for hosted ones: a local server that
did not answer in time is usually still generating, so a read timeout is retried at
most once (:data:`MAX_READ_TIMEOUT_RETRIES`) instead of queueing more full generations
behind the one it is still working on; connection failures, connect timeouts, 429 and
5xx are retried up to the configured count with backoff. Which SDK errors count as
which is each SDK's module (:mod:`mindspace.llm.openai_retry`,
:mod:`mindspace.llm.anthropic_retry`); this one imports no SDK.
"""

from __future__ import annotations

import re
from typing import Any, Literal

__all__ = [
    "MAX_BACKOFF",
    "MAX_READ_TIMEOUT_RETRIES",
    "TimeoutKind",
    "retry_delay",
    "scrub_surrogates",
]

MAX_BACKOFF = 30.0
"""The longest wait before a retry, in seconds."""

MAX_READ_TIMEOUT_RETRIES = 1
"""Retries after a read timeout: the server is probably still busy with the first one."""

TimeoutKind = Literal["connect", "read"]

_SURROGATE = re.compile("[\ud800-\udfff]")


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
