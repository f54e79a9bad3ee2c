"""The retry policy every LLM adapter shares, whatever its SDK: how long to wait, how often.

The policy is tuned for local models as much as for hosted ones: a local server that
did not answer in time is usually still generating, so a read timeout is retried at
most once (:data:`MAX_READ_TIMEOUT_RETRIES`) instead of queueing more full generations
behind the one it is still working on; connection failures, connect timeouts, 429 and
5xx are retried up to the configured count with backoff. Which SDK errors count as
which is each SDK's module (:mod:`mindspace.llm.providers.openai_compat`,
:mod:`mindspace.llm.providers.anthropic_messages`); this one imports no SDK.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from mindspace.errors import LLMError

__all__ = [
    "MAX_BACKOFF",
    "MAX_READ_TIMEOUT_RETRIES",
    "Failure",
    "TimeoutKind",
    "body_message",
    "retry_calls",
    "retry_delay",
    "scrub_surrogates",
    "timeout_kind_of",
]

T = TypeVar("T")

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


@dataclass(frozen=True)
class Failure:
    """What a failed request means: the error to raise, and whether a retry may help."""

    error: LLMError
    retry: bool
    read_timeout: bool = False
    """A read timeout: retried at most :data:`MAX_READ_TIMEOUT_RETRIES` times in all."""


async def retry_calls(
    attempt: Callable[[], Awaitable[T]],
    failure: Callable[[Exception], Failure | None],
    *,
    max_retries: int,
    backoff: float,
    sleep: Callable[[float], Awaitable[None]],
    endpoint: str,
    log: logging.Logger,
) -> T:
    """Run ``attempt`` until it succeeds or its failure may not be retried any more.

    Args:
        attempt: One request.
        failure: What an exception of the request means (None: not a request failure,
            raised as it is).
        max_retries: Retries at most.
        backoff: The first wait in seconds (doubled each retry, or the server's
            ``Retry-After``).
        sleep: Waits (``asyncio.sleep``; a test passes its own).
        endpoint: The server, for the log line.
        log: Where each retry is logged (a warning).

    Raises:
        LLMError: the last failure's error, chained to the SDK's exception.
    """
    retries = 0
    read_timeouts = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            found = failure(exc)
            if found is None:
                raise
            retry = found.retry
            if found.read_timeout:
                read_timeouts += 1
                retry = read_timeouts <= MAX_READ_TIMEOUT_RETRIES
            if not retry or retries >= max_retries:
                raise found.error from exc
            delay = retry_delay(exc, retries, backoff)
        retries += 1
        log.warning(
            "LLM request to %s failed (%s); retry %d/%d in %.1fs",
            endpoint,
            found.error,
            retries,
            max_retries,
            delay,
        )
        await sleep(delay)


def timeout_kind_of(exc: BaseException, timeout_error: type[BaseException]) -> TimeoutKind | None:
    """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server.

    Both SDKs raise one ``timeout_error`` (their ``APITimeoutError``) for both and chain
    the HTTP library's own exception; it is matched by name because an SDK may use
    ``httpx`` or ``httpx2``.
    """
    if not isinstance(exc, timeout_error):
        return None
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ in ("ConnectTimeout", "PoolTimeout"):
        return "connect"
    return "read"


def body_message(body: object, fallback: str) -> str:
    """An error answer's own message (``{"error": {"message": ...}}``), else ``fallback``."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return fallback


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
