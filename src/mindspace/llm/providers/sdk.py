"""What the two SDK adapters share: the error mapping table, the retry loop, the model list.

The ``openai`` and ``anthropic`` SDKs are generated from one template, so they raise the
same family of exceptions (``APIConnectionError``, ``APITimeoutError``, ``APIStatusError``
with ``status_code`` and ``body``, ``RateLimitError``, ...) under different classes.
:class:`SdkErrors` names one SDK's classes and decides what is worth a retry;
:class:`ErrorTable` says how an adapter words each failure, as a table that is read top to
bottom (as httpx maps httpcore's exceptions); :class:`SdkAdapter` runs requests under the
shared retry policy (:mod:`mindspace.llm.providers.retry`) and lists the models. This
module imports no SDK: each adapter's module passes its own classes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar, Protocol, TypeVar, Unpack

from mindspace.errors import LLMConnectionError, LLMError, LLMProviderError, LLMResponseError
from mindspace.llm.port import LLMResponse, Message, Sampling, ToolSchema
from mindspace.llm.providers.retry import (
    Failure,
    TimeoutKind,
    body_message,
    retry_calls,
    scrub_surrogates,
    timeout_kind_of,
)

__all__ = [
    "EXCERPT_CHARS",
    "ErrorRule",
    "ErrorTable",
    "SdkAdapter",
    "SdkClient",
    "SdkErrors",
    "Sleep",
    "UnreadableAnswerError",
]

_T = TypeVar("_T")

Sleep = Callable[[float], Awaitable[None]]

EXCERPT_CHARS = 200
"""Most characters of an unreadable answer quoted in the error."""

ErrorClasses = type[Exception] | tuple[type[Exception], ...]

ErrorRule = tuple[ErrorClasses, type[LLMError], str]
"""One row of an :class:`ErrorTable`: the SDK's exception class(es), our error, its text."""


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one SDK, and what they mean for a retry.

    Attributes:
        api: ``APIError``, the base of every error the SDK raises for a request.
        connection: ``APIConnectionError`` (its ``APITimeoutError`` is one too).
        timeout: ``APITimeoutError``.
        status: ``APIStatusError``: an error answer, with ``status_code`` and ``body``.
        rate_limit: ``RateLimitError`` (429).
    """

    api: type[Exception]
    connection: type[Exception]
    timeout: type[Exception]
    status: type[Exception]
    rate_limit: type[Exception]

    @classmethod
    def of(cls, sdk: ModuleType) -> SdkErrors:
        """The classes of an SDK module generated from the shared template (``openai``)."""
        return cls(
            api=sdk.APIError,
            connection=sdk.APIConnectionError,
            timeout=sdk.APITimeoutError,
            status=sdk.APIStatusError,
            rate_limit=sdk.RateLimitError,
        )

    def is_transient(self, exc: BaseException) -> bool:
        """429, 5xx, timeouts and connection failures may succeed on a retry; nothing else."""
        if isinstance(exc, self.connection | self.rate_limit):
            return True
        return isinstance(exc, self.status) and int(getattr(exc, "status_code", 0)) >= 500

    def timeout_kind(self, exc: BaseException) -> TimeoutKind | None:
        """``read`` for a timeout waiting on the answer, ``connect`` for one reaching the server."""
        return timeout_kind_of(exc, self.timeout)

    def error_detail(self, exc: BaseException) -> str:
        """An error answer's own message (the SDK's repeats the status code)."""
        return body_message(getattr(exc, "body", None), str(getattr(exc, "message", exc)))


@dataclass(frozen=True)
class ErrorTable:
    """How an adapter words each failure of its SDK: the first matching row wins.

    Every text is a :meth:`str.format` template over ``url`` (the endpoint, quoted),
    ``status`` (the HTTP status), ``detail`` (the error answer's own message), ``note``
    (``status_notes`` of that status, else empty), ``reason`` (the SDK's message without
    its full stop) and ``exc`` (the SDK's message); ``unreadable`` is over ``url``,
    ``what`` (what arrived), ``request`` (what was asked for) and ``excerpt``.

    Attributes:
        read_timeout: A timeout waiting on the answer (an :class:`LLMConnectionError`).
        connect_timeout: A timeout reaching the server (an :class:`LLMConnectionError`).
        rules: The other failures, tried in order.
        fallback: Any other SDK error (an :class:`LLMProviderError`).
        unreadable: An answer that arrived but is no usable one (an
            :class:`LLMResponseError`, retried).
        status_notes: Words added after some statuses (Anthropic's 529 "overloaded").
    """

    read_timeout: str
    connect_timeout: str
    rules: tuple[ErrorRule, ...]
    fallback: str
    unreadable: str
    status_notes: Mapping[int, str] = field(default_factory=dict)

    def map(self, exc: Exception, sdk: SdkErrors, base_url: str) -> LLMError:
        """Our error for the SDK's ``exc`` from a request to ``base_url``."""
        status = getattr(exc, "status_code", None)
        values = {
            "url": repr(base_url),
            "status": status,
            "note": self.status_notes.get(status, "") if isinstance(status, int) else "",
            "detail": sdk.error_detail(exc) if isinstance(exc, sdk.status) else "",
            "reason": str(exc).rstrip("."),
            "exc": str(exc),
        }
        kind = sdk.timeout_kind(exc)
        if kind is not None:
            template = self.read_timeout if kind == "read" else self.connect_timeout
            return LLMConnectionError(template.format(**values))
        for classes, error, template in self.rules:
            if isinstance(exc, classes):
                return error(template.format(**values))
        return LLMProviderError(self.fallback.format(**values))


class UnreadableAnswerError(Exception):
    """An answer arrived but is not a usable one (internal; becomes LLMResponseError).

    Args:
        what: What arrived, for the message (``'an answer that is not JSON'``).
        body: The answer's body, quoted in part.
    """

    def __init__(self, what: str, body: str) -> None:
        super().__init__(what)
        self.what = what
        self.body = body


class SdkClient(Protocol):
    """What :class:`SdkAdapter` uses of an SDK's async client."""

    @property
    def models(self) -> Any:
        """The model list resource (``client.models.with_raw_response.list()``)."""

    async def close(self) -> None:
        """Close the HTTP client and its keep-alive connections."""


# A dataclass for its __init__ only: adapters keep identity equality and the plain repr.
@dataclass(eq=False, repr=False, kw_only=True)
class SdkAdapter:
    """The part of an SDK adapter that does not depend on its vendor's wire format.

    A subclass sets :attr:`sdk`, :attr:`errors`, :attr:`log` and :attr:`request_name`,
    builds its client in ``_client`` (the SDK's own retries off), and writes the two
    vendor steps of :meth:`complete`: ``_request`` (the request body) and ``_send`` (one
    attempt, the answer read).

    Args:
        model: The model name.
        base_url: The endpoint, named in every error.
        max_retries: Retries after the first attempt (policy of
            :func:`~mindspace.llm.providers.retry.retry_calls`).
        backoff: Seconds before the first retry.
        sleep: How to wait between retries (tests pass a recorder instead of sleeping).
    """

    sdk: ClassVar[SdkErrors]
    errors: ClassVar[ErrorTable]
    log: ClassVar[logging.Logger]
    request_name: ClassVar[str]
    """What one request is called in errors (``chat completion``, ``message``)."""

    model: str
    base_url: str
    max_retries: int
    backoff: float
    sleep: Sleep
    _client: SdkClient = field(init=False)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        **sampling: Unpack[Sampling],
    ) -> LLMResponse:
        """Send the conversation; retry transient failures; map errors to ours.

        Raises:
            LLMError: a subclass naming the endpoint, after the bounded retries.
        """
        request = self._request(messages, tools, sampling)
        if not _encodable(request):
            request = scrub_surrogates(request)
        return await self._retrying(lambda: self._send(request), self.request_name)

    async def list_models(self) -> list[dict[str, Any]]:
        """The endpoint's model list entries as plain dicts (``mindspace doctor`` lists them).

        Raises:
            LLMError: a subclass naming the endpoint, after the bounded retries.
        """

        async def attempt() -> list[dict[str, Any]]:
            body = await self._models_body()
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise UnreadableAnswerError("a model list that is not JSON", body) from exc
            entries = data.get("data") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise UnreadableAnswerError("a model list without 'data'", body)
            return [e for e in entries if isinstance(e, dict)]

        return await self._retrying(attempt, "model list")

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (call on the same loop)."""
        await self._client.close()

    def _request(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema], sampling: Sampling
    ) -> dict[str, Any]:
        """The vendor's request body for the conversation (the SDK call's keywords)."""
        raise NotImplementedError

    async def _send(self, request: dict[str, Any]) -> LLMResponse:
        """One attempt: send ``request``, read the answer (UnreadableAnswerError if unusable)."""
        raise NotImplementedError

    async def _models_body(self) -> str:
        raw = await self._client.models.with_raw_response.list()
        return str(raw.http_response.text)

    async def _retrying(self, attempt: Callable[[], Awaitable[_T]], what: str) -> _T:
        """``attempt`` under the retry policy; ``what`` names the request in errors."""
        return await retry_calls(
            attempt,
            lambda exc: self._failure(exc, what),
            max_retries=self.max_retries,
            backoff=self.backoff,
            sleep=self.sleep,
            endpoint=self.base_url,
            log=self.log,
        )

    def _failure(self, exc: Exception, what: str) -> Failure | None:
        """What a failed request for a ``what`` means (None: not one, raised as it is)."""
        if isinstance(exc, UnreadableAnswerError):
            message = self.errors.unreadable.format(
                url=repr(self.base_url),
                what=exc.what,
                request=what,
                excerpt=repr(exc.body[:EXCERPT_CHARS]),
            )
            return Failure(LLMResponseError(message), retry=True)
        if isinstance(exc, self.sdk.api):
            error = self.errors.map(exc, self.sdk, self.base_url)
            read_timeout = self.sdk.timeout_kind(exc) == "read"
            return Failure(error, self.sdk.is_transient(exc), read_timeout=read_timeout)
        return None


def _encodable(request: dict[str, Any]) -> bool:
    """Whether ``request`` encodes as UTF-8 JSON as it is (no lone surrogate in it).

    One encoding of the whole request costs half of :func:`scrub_surrogates`'
    walk of every string (a tick's request holds every tool's schema), which is then
    only needed for the rare request that does not encode.
    """
    try:
        json.dumps(request, ensure_ascii=False).encode()
    except (UnicodeEncodeError, TypeError, ValueError):
        return False
    return True
