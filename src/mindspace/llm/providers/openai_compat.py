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
import json
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
        # Not the SDK's typed ``create()``: it walks the whole request (every tool's
        # schema, every message) through its TypedDict transform, and builds a pydantic
        # completion of the answer, ~2.7 of its ~5 ms CPU a call (bench/RESULTS.md,
        # "Worker fleet CPU a tick, round 5"). The request is plain JSON already and the
        # answer is checked field by field below; ``post`` keeps the SDK's headers,
        # authentication, timeouts and status errors.
        body = await self._client.post("/chat/completions", cast_to=str, body=request)
        try:
            answer = json.loads(body)
        except ValueError as exc:
            raise UnreadableAnswerError("an answer that is not JSON", body) from exc
        return _from_wire(answer, self.model, body)


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


def _from_wire(answer: object, model: str, body: str) -> LLMResponse:
    # Any JSON arrives here, so the shape is checked field by field.
    if not isinstance(answer, dict):
        raise UnreadableAnswerError("an answer without choices", body)
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices:
        raise UnreadableAnswerError("an answer without choices", body)
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        raise UnreadableAnswerError("an answer without a message", body)
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise UnreadableAnswerError("a message whose content is not text", body)
    raw_calls = message.get("tool_calls")
    calls: list[ToolCall] = []
    for call in raw_calls if isinstance(raw_calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):  # a non-function tool call (custom tools) is not ours
            continue
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise UnreadableAnswerError("a tool call without a name", body)
        arguments = function.get("arguments")
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{len(calls)}"),
                name=name,
                # Invalid JSON in arguments is the loop's to report to the model.
                arguments=arguments if isinstance(arguments, str) else "",
            )
        )
    return LLMResponse(
        text=content,
        tool_calls=tuple(calls),
        usage=_usage(answer.get("usage")),
        model=str(answer.get("model") or model),
        finish_reason=_finish_reason(choice.get("finish_reason")),
    )


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    details = raw.get("prompt_tokens_details")
    try:
        return Usage(
            prompt_tokens=int(raw.get("prompt_tokens") or 0),
            completion_tokens=int(raw.get("completion_tokens") or 0),
            # OpenAI, vLLM and llama.cpp report the prompt tokens read from their cache.
            cached_tokens=int(
                (details.get("cached_tokens") if isinstance(details, dict) else 0) or 0
            ),
        )
    except (TypeError, ValueError):
        return None  # counts are advisory; a server's odd usage is not fatal


def _finish_reason(raw: object) -> FinishReason | None:
    if raw is None:
        return None
    if raw in ("stop", "length", "tool_calls", "content_filter"):
        return raw
    return "tool_calls" if raw == "function_call" else "other"
