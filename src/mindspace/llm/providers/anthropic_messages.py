"""Anthropic's Messages API through the official ``anthropic`` SDK (extra ``anthropic``).

Selected with ``MINDSPACE_LLM_PROVIDER=anthropic``. The conversation is mapped by
:mod:`mindspace.llm.providers.anthropic_wire` (top-level ``system``, alternating turns, tool
results as ``tool_result`` blocks in a user turn). The SDK's own retries are turned off
so that ours are the only ones, under the same bounded policy as the OpenAI-compatible
adapter (:mod:`mindspace.llm.providers.retry`): 429, 5xx, Anthropic's ``529
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
from collections.abc import Sequence
from typing import Any, Literal

import anthropic

from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.port import LLMResponse, Message, Sampling, ToolSchema
from mindspace.llm.providers.anthropic_wire import (
    ANTHROPIC_BASE_URL,
    MalformedAnswerError,
    from_wire,
    to_wire,
    to_wire_tools,
)
from mindspace.llm.providers.sdk import (
    EXCERPT_CHARS,
    ErrorTable,
    SdkAdapter,
    SdkErrors,
    Sleep,
    UnreadableAnswerError,
)

__all__ = [
    "ANTHROPIC_ERRORS",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "EXCERPT_CHARS",
    "AnthropicLLM",
]

DEFAULT_BASE_URL = ANTHROPIC_BASE_URL
"""Anthropic's API; the SDK adds ``/v1/messages``."""

DEFAULT_MAX_TOKENS = 1024
"""``max_tokens`` when a caller gives none (the Messages API requires one)."""

MAX_TEMPERATURE = 1.0
"""Anthropic's temperature ends at 1; higher settings (OpenAI's scale ends at 2) are capped."""

ANTHROPIC_ERRORS = SdkErrors.of(anthropic)
"""The ``anthropic`` SDK's errors; its ``529 overloaded_error`` is a 5xx, hence retried."""

_ERRORS = ErrorTable(
    read_timeout=(
        "The Anthropic API at {url} did not answer in time; raise "
        "MINDSPACE_LLM_TIMEOUT for long replies."
    ),
    connect_timeout=(
        "Cannot connect to the Anthropic API at {url} in time; check the "
        "network (MINDSPACE_LLM_CONNECT_TIMEOUT sets the wait)."
    ),
    rules=(
        (
            anthropic.APIConnectionError,
            LLMConnectionError,
            "Cannot reach the Anthropic API at {url} ({reason}); "
            "check MINDSPACE_LLM_BASE_URL and the network.",
        ),
        (
            (anthropic.AuthenticationError, anthropic.PermissionDeniedError),
            LLMAuthenticationError,
            "The Anthropic API at {url} refused the API key ({detail}); check "
            "MINDSPACE_LLM_API_KEY.",
        ),
        (
            anthropic.RateLimitError,
            LLMRateLimitError,
            "The Anthropic API at {url} is rate limiting requests (429): {detail}",
        ),
        (
            anthropic.NotFoundError,
            LLMProviderError,
            "The Anthropic API at {url} answered 404 ({detail}); check MINDSPACE_LLM_MODEL.",
        ),
        (
            anthropic.APIStatusError,
            LLMProviderError,
            "The Anthropic API at {url} answered {status}{note}: {detail}",
        ),
        (
            anthropic.APIResponseValidationError,
            LLMResponseError,
            "The Anthropic API at {url} sent an answer we cannot read: {exc}",
        ),
    ),
    fallback="The Anthropic API at {url} failed: {exc}",
    unreadable=(
        "The Anthropic API at {url} sent {what} (body starts {excerpt}); check that "
        "MINDSPACE_LLM_BASE_URL points at a server that speaks the Messages API."
    ),
    status_notes={529: " (overloaded; try again later)"},
)


class AnthropicLLM(SdkAdapter):
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

    sdk = ANTHROPIC_ERRORS
    errors = _ERRORS
    log = logging.getLogger("mindspace.llm.anthropic")
    request_name = "message"
    _client: anthropic.AsyncAnthropic

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
        super().__init__(
            model=model, base_url=root, max_retries=max_retries, backoff=backoff, sleep=sleep
        )
        self.tool_choice = tool_choice
        self.default_max_tokens = default_max_tokens
        # An explicit key and base URL: the SDK then reads no ANTHROPIC_* variable or
        # profile of its own, so what runs is what the settings say.
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=root,
            timeout=anthropic.Timeout(timeout, connect=min(connect_timeout, timeout)),
            max_retries=0,
        )

    def _request(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema], sampling: Sampling
    ) -> dict[str, Any]:
        wire = to_wire(messages, native_tools=bool(tools))
        max_tokens, temperature = sampling.get("max_tokens"), sampling.get("temperature")
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
        return request

    async def _send(self, request: dict[str, Any]) -> LLMResponse:
        raw = await self._client.messages.with_raw_response.create(**request)
        body = raw.http_response.text
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise UnreadableAnswerError("an answer that is not JSON", body) from exc
        try:
            return from_wire(data, self.model)
        except MalformedAnswerError as exc:
            raise UnreadableAnswerError(exc.what, body) from exc
