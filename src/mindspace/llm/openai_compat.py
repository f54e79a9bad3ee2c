"""Any OpenAI-compatible chat-completions endpoint through the official ``openai`` SDK.

Works with OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio and anything else that
speaks ``/v1/chat/completions`` with tool calling. The SDK's own retries are turned off
so that ours are the only ones (policy in :mod:`mindspace.llm.openai_retry`): bounded,
with exponential backoff, on 429, 5xx, connection failures, connect timeouts and
malformed answers; after a read timeout at most one retry. Vendor errors become ours
(:class:`~mindspace.errors.LLMError` and subclasses) at this boundary.

Whenever tools are offered the request says ``tool_choice: "auto"`` (some servers, such
as llama-cpp-python's ``chatml-function-calling``, render tools only then); pass
``tool_choice="omit"`` for a server that rejects the field. Tool calls a model writes
as text in its reply are not parsed here: the ReAct loop does that.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import openai

from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.openai_retry import error_detail, is_transient, scrub_surrogates, timeout_kind
from mindspace.llm.port import (
    FinishReason,
    LLMResponse,
    Message,
    ToolCall,
    ToolSchema,
    Usage,
)
from mindspace.llm.retry_policy import Failure, retry_calls

__all__ = ["EXCERPT_CHARS", "OpenAICompatibleLLM", "ToolChoice"]

logger = logging.getLogger("mindspace.llm.openai")

Sleep = Callable[[float], Awaitable[None]]
ToolChoice = Literal["auto", "omit"]
"""``auto``: send ``tool_choice: "auto"`` with tools; ``omit``: never send the field."""

EXCERPT_CHARS = 200
"""Most characters of a malformed answer quoted in the error."""

_T = TypeVar("_T")


class _MalformedAnswerError(Exception):
    """An answer arrived but is not a usable completion (internal; becomes LLMResponseError)."""

    def __init__(self, what: str, body: str) -> None:
        super().__init__(what)
        self.what = what
        self.body = body


class OpenAICompatibleLLM:
    """An LLM behind an OpenAI-compatible endpoint.

    Args:
        base_url: The endpoint's base URL, e.g. ``http://127.0.0.1:11434/v1``.
        model: The model name the endpoint serves.
        api_key: The key; local servers usually accept any value.
        timeout: Seconds to wait for an answer (the read timeout: generation time).
        connect_timeout: Seconds to wait for a connection to the server.
        max_retries: Retries after the first attempt on 429, 5xx, connection failures,
            connect timeouts and malformed answers; a read timeout is retried at most
            once within them.
        backoff: Seconds before the first retry; doubled each time, capped at 30 s,
            or the server's ``Retry-After``.
        sleep: How to wait between retries (tests pass a recorder instead of sleeping).
        tool_choice: ``auto`` sends ``tool_choice: "auto"`` whenever tools are offered;
            ``omit`` never sends it.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Sleep = asyncio.sleep,
        tool_choice: ToolChoice = "auto",
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.max_retries = max_retries
        self.backoff = backoff
        self.tool_choice: ToolChoice = tool_choice
        self._sleep = sleep
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(timeout, connect=min(connect_timeout, timeout)),
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
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [_to_wire(m) for m in messages],
        }
        if tools:
            request["tools"] = list(tools)
            if self.tool_choice == "auto":
                request["tool_choice"] = "auto"
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if temperature is not None:
            request["temperature"] = temperature
        request = scrub_surrogates(request)

        async def attempt() -> LLMResponse:
            raw = await self._client.chat.completions.with_raw_response.create(**request)
            body = raw.http_response.text
            try:
                completion = raw.parse()
            except (ValueError, openai.APIResponseValidationError) as exc:
                # json.JSONDecodeError is a ValueError: a 200 whose body is not JSON
                raise _MalformedAnswerError("an answer that is not JSON", body) from exc
            return _from_wire(completion, self.model, body)

        return await self._retrying(attempt, "chat completion")

    async def list_models(self) -> list[dict[str, Any]]:
        """The endpoint's ``/models`` entries as plain dicts (with any extra fields).

        Raises:
            LLMError: as :meth:`complete`.
        """

        async def attempt() -> list[dict[str, Any]]:
            raw = await self._client.models.with_raw_response.list()
            body = raw.http_response.text
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise _MalformedAnswerError("a model list that is not JSON", body) from exc
            entries = data.get("data") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise _MalformedAnswerError("a model list without 'data'", body)
            return [e for e in entries if isinstance(e, dict)]

        return await self._retrying(attempt, "model list")

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (call on the same loop)."""
        await self._client.close()

    async def _retrying(self, attempt: Callable[[], Awaitable[_T]], what: str) -> _T:
        return await retry_calls(
            attempt,
            lambda exc: self._failure(exc, what),
            max_retries=self.max_retries,
            backoff=self.backoff,
            sleep=self._sleep,
            endpoint=self.base_url,
            log=logger,
        )

    def _failure(self, exc: Exception, what: str) -> Failure | None:
        """What a failed request for a ``what`` means (None: not one, raised as it is)."""
        if isinstance(exc, openai.APIError):
            error = _map_error(exc, self.base_url)
            return Failure(error, is_transient(exc), read_timeout=timeout_kind(exc) == "read")
        if isinstance(exc, _MalformedAnswerError):
            excerpt = exc.body[:EXCERPT_CHARS]
            return Failure(
                LLMResponseError(
                    f"The LLM at {self.base_url!r} sent {exc.what} for a {what} "
                    f"(body starts {excerpt!r}); check that MINDSPACE_LLM_BASE_URL points "
                    "at an OpenAI-compatible /v1 endpoint."
                ),
                retry=True,
            )
        return None


def _to_wire(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        wire["name"] = message.name
    return wire


def _from_wire(completion: Any, model: str, body: str) -> LLMResponse:
    # Without strict validation the SDK builds a completion from any JSON (or returns
    # the text for a non-JSON content type), so the shape is checked field by field.
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise _MalformedAnswerError("an answer without choices", body)
    message = getattr(choices[0], "message", None)
    if message is None or not hasattr(message, "content"):
        raise _MalformedAnswerError("an answer without a message", body)
    content = message.content
    if content is not None and not isinstance(content, str):
        raise _MalformedAnswerError("a message whose content is not text", body)
    calls: list[ToolCall] = []
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        if function is None:  # a non-function tool call (custom tools) is not ours
            continue
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise _MalformedAnswerError("a tool call without a name", body)
        arguments = getattr(function, "arguments", None)
        calls.append(
            ToolCall(
                id=str(getattr(call, "id", None) or f"call_{len(calls)}"),
                name=name,
                # Invalid JSON in arguments is the loop's to report to the model.
                arguments=arguments if isinstance(arguments, str) else "",
            )
        )
    usage = None
    raw_usage = getattr(completion, "usage", None)
    if raw_usage is not None:
        try:
            details = getattr(raw_usage, "prompt_tokens_details", None)
            usage = Usage(
                prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
                # OpenAI, vLLM and llama.cpp report the prompt tokens read from their cache.
                cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
            )
        except (TypeError, ValueError):
            usage = None  # counts are advisory; a server's odd usage is not fatal
    return LLMResponse(
        text=content,
        tool_calls=tuple(calls),
        usage=usage,
        model=str(getattr(completion, "model", None) or model),
        finish_reason=_finish_reason(getattr(choices[0], "finish_reason", None)),
    )


def _finish_reason(raw: object) -> FinishReason | None:
    if raw is None:
        return None
    if raw in ("stop", "length", "tool_calls", "content_filter"):
        return raw
    return "tool_calls" if raw == "function_call" else "other"


def _map_error(exc: openai.APIError, base_url: str) -> LLMError:
    kind = timeout_kind(exc)
    if kind == "read":
        return LLMConnectionError(
            f"The LLM at {base_url!r} did not answer in time; a slow local model may need "
            "a longer MINDSPACE_LLM_TIMEOUT."
        )
    if kind == "connect":
        return LLMConnectionError(
            f"Cannot connect to the LLM at {base_url!r} in time; check that the server is "
            "running (MINDSPACE_LLM_CONNECT_TIMEOUT sets the wait)."
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMConnectionError(
            f"Cannot reach the LLM at {base_url!r} ({str(exc).rstrip('.')}); check "
            "MINDSPACE_LLM_BASE_URL and that the server is running."
        )
    if isinstance(exc, openai.AuthenticationError):
        return LLMAuthenticationError(
            f"The LLM at {base_url!r} refused the API key; check MINDSPACE_LLM_API_KEY."
        )
    if isinstance(exc, openai.RateLimitError):
        return LLMRateLimitError(f"The LLM at {base_url!r} is rate limiting requests (429)")
    if isinstance(exc, openai.NotFoundError):
        return LLMProviderError(
            f"The LLM at {base_url!r} answered 404 ({error_detail(exc)}); check "
            "MINDSPACE_LLM_MODEL and that the base URL ends in /v1."
        )
    if isinstance(exc, openai.APIStatusError):
        return LLMProviderError(
            f"The LLM at {base_url!r} answered {exc.status_code}: {error_detail(exc)}"
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMResponseError(f"The LLM at {base_url!r} sent an answer we cannot read: {exc}")
    return LLMProviderError(f"The LLM at {base_url!r} failed: {exc}")
