"""What both OpenAI-compatible adapters (chat and embeddings) share about failures.

Which errors are worth a retry, how long to wait before it, the readable detail of an
error answer, and the text clean-up every request needs at the boundary. Each adapter
maps errors to its own exception family.

The policy is tuned for local models as much as for hosted ones: a local server that
did not answer in time is usually still generating, so a read timeout is retried at
most once (:data:`MAX_READ_TIMEOUT_RETRIES`) instead of queueing more full generations
behind the one it is still working on; connection failures, connect timeouts, 429 and
5xx (a 503 while a model loads) are retried up to the configured count with backoff.
The SDK-neutral part of the policy lives in :mod:`mindspace.llm.retry_policy` and is
re-exported here.
"""

from __future__ import annotations

import openai

from mindspace.llm.retry_policy import (
    MAX_BACKOFF,
    MAX_READ_TIMEOUT_RETRIES,
    TimeoutKind,
    body_message,
    retry_delay,
    scrub_surrogates,
    timeout_kind_of,
)

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


def is_transient(exc: openai.APIError) -> bool:
    """429, 5xx, timeouts and connection failures may succeed on a retry; nothing else."""
    if isinstance(exc, openai.APIConnectionError | openai.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def timeout_kind(exc: BaseException) -> TimeoutKind | None:
    """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server."""
    return timeout_kind_of(exc, openai.APITimeoutError)


def error_detail(exc: openai.APIStatusError) -> str:
    """The error answer's own message (the SDK's repeats the status code)."""
    return body_message(exc.body, exc.message)
