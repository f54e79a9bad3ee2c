"""Anthropic's Messages API through the official ``anthropic`` SDK (extra ``anthropic``).

Selected with ``MINDSPACE_LLM_PROVIDER=anthropic``. The conversation is mapped by
:mod:`mindspace.llm.anthropic_wire` (top-level ``system``, alternating turns, tool
results as ``tool_result`` blocks in a user turn). The SDK's own retries are turned off
so that ours are the only ones, under the same bounded policy as the OpenAI-compatible
adapter (:mod:`mindspace.llm.retry_policy`): 429, 5xx, Anthropic's ``529
overloaded_error``, connection failures, connect timeouts and malformed answers are
retried with backoff or the server's ``retry-after``; a read timeout at most once.
Vendor errors become ours (:class:`~mindspace.errors.LLMError` and subclasses) here.

A model that answers with text only (no ``tool_use`` blocks) works as with any other
adapter: the text is the reply, and tool calls it writes as text are the ReAct loop's
to find.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import anthropic

from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.anthropic_retry import error_detail, is_transient, timeout_kind
from mindspace.llm.anthropic_wire import (
    ANTHROPIC_BASE_URL,
    MalformedAnswerError,
    from_wire,
    to_wire,
    to_wire_tools,
)
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.llm.retry_policy import Failure, retry_calls, scrub_surrogates

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "EXCERPT_CHARS", "AnthropicLLM"]

logger = logging.getLogger("mindspace.llm.anthropic")

Sleep = Callable[[float], Awaitable[None]]
_T = TypeVar("_T")

DEFAULT_BASE_URL = ANTHROPIC_BASE_URL
"""Anthropic's API; the SDK adds ``/v1/messages``."""

DEFAULT_MAX_TOKENS = 1024
"""``max_tokens`` when a caller gives none (the Messages API requires one)."""

EXCERPT_CHARS = 200
"""Most characters of a malformed answer quoted in the error."""

MAX_TEMPERATURE = 1.0
"""Anthropic's temperature ends at 1; higher settings (OpenAI's scale ends at 2) are capped."""


class AnthropicLLM:
    """An LLM behind Anthropic's Messages API (or any server that speaks it).

    Args:
        model: The model name, e.g. ``claude-sonnet-4-5``.
        api_key: The key, sent as ``x-api-key``.
        base_url: The API's root, without ``/v1`` (a trailing ``/v1`` is dropped, since
            the SDK adds ``/v1/messages`` itself).
        timeout: Seconds to wait for an answer (the read timeout: generation time).
        connect_timeout: Seconds to wait for a connection to the server.
        max_retries: Retries after the first attempt on 429, 5xx (529 included),
            connection failures, connect timeouts and malformed answers; a read timeout
            is retried at most once within them.
        backoff: Seconds before the first retry; doubled each time, capped at 30 s, or
            the server's ``retry-after``.
        sleep: How to wait between retries (tests pass a recorder instead of sleeping).
        tool_choice: ``auto`` sends ``tool_choice: {"type": "auto"}`` whenever tools are
            offered; ``omit`` never sends it (the API's default is the same).
        default_max_tokens: ``max_tokens`` when a call gives none.
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Sleep = asyncio.sleep,
        tool_choice: Literal["auto", "omit"] = "auto",
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        root = base_url.rstrip("/")
        root = root.removesuffix("/v1")
        self.model = model
        self.base_url = root
        self.max_retries = max_retries
        self.backoff = backoff
        self.tool_choice = tool_choice
        self.default_max_tokens = default_max_tokens
        self._sleep = sleep
        # An explicit key and base URL: the SDK then reads no ANTHROPIC_* variable or
        # profile of its own, so what runs is what the settings say.
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=root,
            timeout=anthropic.Timeout(timeout, connect=min(connect_timeout, timeout)),
            max_retries=0,
        )

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResponse:
        """Send the conversation; retry transient failures; map errors to ours.

        Raises:
            LLMError: a subclass naming the endpoint, after the bounded retries.
        """
        wire = to_wire(messages, native_tools=bool(tools))
        request: dict[str, Any] = {
            "model": self.model,
            "messages": wire.messages,
            "max_tokens": max_tokens if max_tokens is not None else self.default_max_tokens,
        }
        if wire.system is not None and wire.system_cached:
            # The system text (and the tools before it) is the stable prefix: cache it.
            request["system"] = [
                {"type": "text", "text": wire.system, "cache_control": {"type": "ephemeral"}}
            ]
        elif wire.system is not None:
            request["system"] = wire.system
        if tools:
            request["tools"] = to_wire_tools(tools)
            if wire.system_cached:
                request["tools"][-1]["cache_control"] = {"type": "ephemeral"}
            if self.tool_choice == "auto":
                request["tool_choice"] = {"type": "auto"}
        if temperature is not None:
            # In the body, not as a keyword: newer SDKs dropped the sampling keywords
            # (the API decides per model); older ones still take them.
            request["extra_body"] = {"temperature": min(temperature, MAX_TEMPERATURE)}
        request = scrub_surrogates(request)

        async def attempt() -> LLMResponse:
            raw = await self._client.messages.with_raw_response.create(**request)
            body = raw.http_response.text
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise _UnreadableAnswerError("an answer that is not JSON", body) from exc
            try:
                return from_wire(data, self.model)
            except MalformedAnswerError as exc:
                raise _UnreadableAnswerError(exc.what, body) from exc

        return await self._retrying(attempt)

    async def list_models(self) -> list[dict[str, Any]]:
        """The API's ``/v1/models`` entries as plain dicts (``mindspace doctor`` lists them).

        Raises:
            LLMError: as :meth:`complete`.
        """

        async def attempt() -> list[dict[str, Any]]:
            raw = await self._client.models.with_raw_response.list()
            body = raw.http_response.text
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise _UnreadableAnswerError("a model list that is not JSON", body) from exc
            entries = data.get("data") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise _UnreadableAnswerError("a model list without 'data'", body)
            return [e for e in entries if isinstance(e, dict)]

        return await self._retrying(attempt)

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (call on the same loop)."""
        await self._client.close()

    async def _retrying(self, attempt: Callable[[], Awaitable[_T]]) -> _T:
        return await retry_calls(
            attempt,
            self._failure,
            max_retries=self.max_retries,
            backoff=self.backoff,
            sleep=self._sleep,
            endpoint=self.base_url,
            log=logger,
        )

    def _failure(self, exc: Exception) -> Failure | None:
        """What a failed request means (None: not one, raised as it is)."""
        if isinstance(exc, anthropic.APIError):
            error = _map_error(exc, self.base_url)
            return Failure(error, is_transient(exc), read_timeout=timeout_kind(exc) == "read")
        if isinstance(exc, _UnreadableAnswerError):
            excerpt = exc.body[:EXCERPT_CHARS]
            return Failure(
                LLMResponseError(
                    f"The Anthropic API at {self.base_url!r} sent {exc.what} (body starts "
                    f"{excerpt!r}); check that MINDSPACE_LLM_BASE_URL points at a server "
                    "that speaks the Messages API."
                ),
                retry=True,
            )
        return None


class _UnreadableAnswerError(Exception):
    """An answer that is not a usable message, with its body (internal)."""

    def __init__(self, what: str, body: str) -> None:
        super().__init__(what)
        self.what = what
        self.body = body


def _map_error(exc: anthropic.APIError, base_url: str) -> LLMError:
    kind = timeout_kind(exc)
    if kind == "read":
        return LLMConnectionError(
            f"The Anthropic API at {base_url!r} did not answer in time; raise "
            "MINDSPACE_LLM_TIMEOUT for long replies."
        )
    if kind == "connect":
        return LLMConnectionError(
            f"Cannot connect to the Anthropic API at {base_url!r} in time; check the "
            "network (MINDSPACE_LLM_CONNECT_TIMEOUT sets the wait)."
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMConnectionError(
            f"Cannot reach the Anthropic API at {base_url!r} ({str(exc).rstrip('.')}); "
            "check MINDSPACE_LLM_BASE_URL and the network."
        )
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return LLMAuthenticationError(
            f"The Anthropic API at {base_url!r} refused the API key "
            f"({error_detail(exc)}); check MINDSPACE_LLM_API_KEY."
        )
    if isinstance(exc, anthropic.RateLimitError):
        return LLMRateLimitError(
            f"The Anthropic API at {base_url!r} is rate limiting requests (429): "
            f"{error_detail(exc)}"
        )
    if isinstance(exc, anthropic.NotFoundError):
        return LLMProviderError(
            f"The Anthropic API at {base_url!r} answered 404 ({error_detail(exc)}); check "
            "MINDSPACE_LLM_MODEL."
        )
    if isinstance(exc, anthropic.APIStatusError):
        overloaded = " (overloaded; try again later)" if exc.status_code == 529 else ""
        return LLMProviderError(
            f"The Anthropic API at {base_url!r} answered {exc.status_code}{overloaded}: "
            f"{error_detail(exc)}"
        )
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMResponseError(
            f"The Anthropic API at {base_url!r} sent an answer we cannot read: {exc}"
        )
    return LLMProviderError(f"The Anthropic API at {base_url!r} failed: {exc}")
