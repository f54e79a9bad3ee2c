"""Any OpenAI-compatible chat-completions endpoint through the official ``openai`` SDK.

Works with OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio and anything else that
speaks ``/v1/chat/completions`` with tool calling. The SDK's own retries are turned off
so that ours are the only ones: bounded, with exponential backoff, on 429, 5xx,
timeouts and connection failures. Vendor errors become ours
(:class:`~mindspace.errors.LLMError` and subclasses) at this boundary.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import openai

from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.openai_retry import error_detail, is_transient, retry_delay
from mindspace.llm.port import (
    FinishReason,
    LLMResponse,
    Message,
    ToolCall,
    ToolSchema,
    Usage,
)

__all__ = ["OpenAICompatibleLLM"]

logger = logging.getLogger("mindspace.llm.openai")

Sleep = Callable[[float], Awaitable[None]]


class OpenAICompatibleLLM:
    """An LLM behind an OpenAI-compatible endpoint.

    Args:
        base_url: The endpoint's base URL, e.g. ``http://127.0.0.1:11434/v1``.
        model: The model name the endpoint serves.
        api_key: The key; local servers usually accept any value.
        timeout: Seconds per request.
        max_retries: Retries after the first attempt on 429, 5xx, timeouts and
            connection failures.
        backoff: Seconds before the first retry; doubled each time, capped at 30 s.
        sleep: How to wait between retries (tests pass a recorder instead of sleeping).
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout,
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
        """Send the conversation; retry transient failures; map errors to ours."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [_to_wire(m) for m in messages],
        }
        if tools:
            request["tools"] = list(tools)
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if temperature is not None:
            request["temperature"] = temperature
        attempt = 0
        while True:
            try:
                completion = await self._client.chat.completions.create(**request)
            except openai.APIError as exc:
                error = _map_error(exc, self.base_url)
                if attempt < self.max_retries and is_transient(exc):
                    delay = retry_delay(exc, attempt, self.backoff)
                    attempt += 1
                    logger.warning(
                        "LLM request to %s failed (%s); retry %d/%d in %.1fs",
                        self.base_url,
                        error,
                        attempt,
                        self.max_retries,
                        delay,
                    )
                    await self._sleep(delay)
                    continue
                raise error from exc
            return _from_wire(completion, self.model)

    async def aclose(self) -> None:
        """Close the HTTP client and its keep-alive connections (call on the same loop)."""
        await self._client.close()


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


def _from_wire(completion: Any, model: str) -> LLMResponse:
    choices = getattr(completion, "choices", None)
    if not choices:
        raise LLMResponseError(f"The endpoint returned no choices for model {model!r}")
    message = choices[0].message
    calls = []
    for call in message.tool_calls or ():
        function = getattr(call, "function", None)
        if function is None:  # a non-function tool call (custom tools) is not ours
            continue
        calls.append(ToolCall(id=call.id, name=function.name, arguments=function.arguments or ""))
    usage = None
    if completion.usage is not None:
        usage = Usage(
            prompt_tokens=int(completion.usage.prompt_tokens or 0),
            completion_tokens=int(completion.usage.completion_tokens or 0),
        )
    return LLMResponse(
        text=message.content,
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
    if isinstance(exc, openai.APITimeoutError):
        return LLMConnectionError(f"The LLM at {base_url!r} did not answer in time")
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
    return LLMProviderError(f"The LLM at {base_url!r} failed: {exc}")
