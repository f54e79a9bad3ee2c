"""Any OpenAI-compatible chat-completions endpoint through the official ``openai`` SDK.

Works with OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio and anything else that
speaks ``/v1/chat/completions`` with tool calling. The SDK's own retries are turned off
so that ours are the only ones (policy in :mod:`mindspace.llm.providers.openai_compat`): bounded,
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
import logging
from collections.abc import Sequence
from typing import Any, Literal

import openai

from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.port import (
    FinishReason,
    LLMResponse,
    Message,
    Sampling,
    ToolCall,
    ToolSchema,
    Usage,
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
    "EXCERPT_CHARS",
    "OPENAI_ERRORS",
    "OpenAICompatibleLLM",
    "ToolChoice",
    "error_detail",
    "is_transient",
    "timeout_kind",
]

ToolChoice = Literal["auto", "omit"]
"""``auto``: send ``tool_choice: "auto"`` with tools; ``omit``: never send the field."""

OPENAI_ERRORS = SdkErrors.of(openai)
"""The ``openai`` SDK's errors, for this adapter and the OpenAI-compatible embedder."""

is_transient = OPENAI_ERRORS.is_transient
timeout_kind = OPENAI_ERRORS.timeout_kind
error_detail = OPENAI_ERRORS.error_detail

_ERRORS = ErrorTable(
    read_timeout=(
        "The LLM at {url} did not answer in time; a slow local model may need "
        "a longer MINDSPACE_LLM_TIMEOUT."
    ),
    connect_timeout=(
        "Cannot connect to the LLM at {url} in time; check that the server is "
        "running (MINDSPACE_LLM_CONNECT_TIMEOUT sets the wait)."
    ),
    rules=(
        (
            openai.APIConnectionError,
            LLMConnectionError,
            "Cannot reach the LLM at {url} ({reason}); check "
            "MINDSPACE_LLM_BASE_URL and that the server is running.",
        ),
        (
            openai.AuthenticationError,
            LLMAuthenticationError,
            "The LLM at {url} refused the API key; check MINDSPACE_LLM_API_KEY.",
        ),
        (
            openai.RateLimitError,
            LLMRateLimitError,
            "The LLM at {url} is rate limiting requests (429)",
        ),
        (
            openai.NotFoundError,
            LLMProviderError,
            "The LLM at {url} answered 404 ({detail}); check "
            "MINDSPACE_LLM_MODEL and that the base URL ends in /v1.",
        ),
        (openai.APIStatusError, LLMProviderError, "The LLM at {url} answered {status}: {detail}"),
        (
            openai.APIResponseValidationError,
            LLMResponseError,
            "The LLM at {url} sent an answer we cannot read: {exc}",
        ),
    ),
    fallback="The LLM at {url} failed: {exc}",
    unreadable=(
        "The LLM at {url} sent {what} for a {request} (body starts {excerpt}); check that "
        "MINDSPACE_LLM_BASE_URL points at an OpenAI-compatible /v1 endpoint."
    ),
)


class OpenAICompatibleLLM(SdkAdapter):
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

    sdk = OPENAI_ERRORS
    errors = _ERRORS
    log = logging.getLogger("mindspace.llm.openai")
    request_name = "chat completion"
    _client: openai.AsyncOpenAI

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
        super().__init__(
            model=model, base_url=base_url, max_retries=max_retries, backoff=backoff, sleep=sleep
        )
        self.tool_choice: ToolChoice = tool_choice
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(timeout, connect=min(connect_timeout, timeout)),
            max_retries=0,
        )

    def _request(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema], sampling: Sampling
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [_to_wire(m) for m in messages],
        }
        if tools:
            request["tools"] = list(tools)
            if self.tool_choice == "auto":
                request["tool_choice"] = "auto"
        # The options that are set, under the API's own names (max_tokens, temperature).
        request.update((name, value) for name, value in sampling.items() if value is not None)
        return request

    async def _send(self, request: dict[str, Any]) -> LLMResponse:
        raw = await self._client.chat.completions.with_raw_response.create(**request)
        body = raw.http_response.text
        try:
            completion = raw.parse()
        except (ValueError, openai.APIResponseValidationError) as exc:
            # json.JSONDecodeError is a ValueError: a 200 whose body is not JSON
            raise UnreadableAnswerError("an answer that is not JSON", body) from exc
        return _from_wire(completion, self.model, body)


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
        raise UnreadableAnswerError("an answer without choices", body)
    message = getattr(choices[0], "message", None)
    if message is None or not hasattr(message, "content"):
        raise UnreadableAnswerError("an answer without a message", body)
    content = message.content
    if content is not None and not isinstance(content, str):
        raise UnreadableAnswerError("a message whose content is not text", body)
    calls: list[ToolCall] = []
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        if function is None:  # a non-function tool call (custom tools) is not ours
            continue
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise UnreadableAnswerError("a tool call without a name", body)
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
