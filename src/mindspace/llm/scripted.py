"""Fakes for tests, shipped so users can test their own assistants: scripted and function-backed.

Example:
    >>> llm = ScriptedLLM()
    >>> llm.enqueue(tool_calls=[{"name": "add_goal", "arguments": {"description": "Fix the gate"}}])
    >>> llm.enqueue("Done - the gate is on my list.")
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

from mindspace.errors import LLMError
from mindspace.llm.port import LLMResponse, Message, Sampling, ToolCall, ToolSchema, Usage

__all__ = ["FunctionLLM", "LLMCall", "ScriptedLLM"]


@dataclass(frozen=True)
class LLMCall:
    """What a fake LLM was sent in one request."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    max_tokens: int | None
    temperature: float | None

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools that were offered."""
        return [str(t.get("function", {}).get("name", "")) for t in self.tools]

    @property
    def last_user_text(self) -> str:
        """Content of the last user message, or an empty string."""
        for message in reversed(self.messages):
            if message.role == "user" and message.content:
                return message.content
        return ""


ToolCallSpec = ToolCall | Mapping[str, Any]


class _RecordingLLM:
    """What both fakes share: every request is recorded in :attr:`history`, then answered."""

    model: str
    history: list[LLMCall]

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        **sampling: Unpack[Sampling],
    ) -> LLMResponse:
        """Record the request, then answer it as the fake does."""
        max_tokens, temperature = sampling.get("max_tokens"), sampling.get("temperature")
        self.history.append(LLMCall(tuple(messages), tuple(tools), max_tokens, temperature))
        return await self._answer(messages, tools)

    async def _answer(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> LLMResponse:
        raise NotImplementedError


class ScriptedLLM(_RecordingLLM):
    """Plays queued replies in order and records every request in :attr:`history`.

    Args:
        model: The model name reported in responses.
    """

    def __init__(self, model: str = "scripted") -> None:
        self.model = model
        self.history: list[LLMCall] = []
        self._queue: deque[LLMResponse | BaseException] = deque()
        self._ids = 0

    def enqueue(
        self,
        text: str | None = None,
        *,
        tool_calls: Sequence[ToolCallSpec] = (),
        usage: Usage | None = None,
    ) -> None:
        """Queue a reply: text, tool calls (``{"name": ..., "arguments": {...}}``), or both."""
        calls = tuple(self._tool_call(spec) for spec in tool_calls)
        if text is None and not calls:
            raise ValueError("enqueue() needs text, tool_calls, or both")
        self._queue.append(LLMResponse(text=text, tool_calls=calls, usage=usage, model=self.model))

    def enqueue_response(self, response: LLMResponse) -> None:
        """Queue a ready-made response."""
        self._queue.append(response)

    def enqueue_error(self, error: BaseException) -> None:
        """Queue an exception to be raised by the next request."""
        self._queue.append(error)

    @property
    def pending(self) -> int:
        """How many queued replies are left."""
        return len(self._queue)

    async def _answer(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> LLMResponse:
        """Play the next queued reply."""
        if not self._queue:
            raise LLMError(
                f"ScriptedLLM has no reply queued for request #{len(self.history)}; "
                "call enqueue() before the code under test asks the model."
            )
        reply = self._queue.popleft()
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def _tool_call(self, spec: ToolCallSpec) -> ToolCall:
        if isinstance(spec, ToolCall):
            return spec
        self._ids += 1
        arguments = spec.get("arguments", {})
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return ToolCall(
            id=str(spec.get("id", f"call_{self._ids}")), name=spec["name"], arguments=raw
        )


Responder = Callable[
    [Sequence[Message], Sequence[ToolSchema]],
    LLMResponse | str | Awaitable[LLMResponse | str],
]


class FunctionLLM(_RecordingLLM):
    """An LLM backed by a function of ``(messages, tools)`` returning a response or text.

    Args:
        function: Sync or async; a plain string becomes a text-only response.
        model: The model name reported in responses.
    """

    def __init__(self, function: Responder, model: str = "function") -> None:
        self.function = function
        self.model = model
        self.history: list[LLMCall] = []

    async def _answer(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> LLMResponse:
        """Call the function and normalise its answer."""
        answer = self.function(messages, tools)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str):
            return LLMResponse(text=answer, model=self.model)
        return answer
