"""The LLM port: chat messages in, text and tool calls out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from mindspace.validation import replace_not_text

__all__ = [
    "LLM",
    "FinishReason",
    "LLMResponse",
    "Message",
    "Role",
    "Sampling",
    "ToolCall",
    "ToolSchema",
    "Usage",
    "clean_response",
    "close_llm",
]

Role = Literal["system", "user", "assistant", "tool"]

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "other"]
"""Why the model stopped: ``length`` means the reply was cut at the token limit."""

ToolSchema = dict[str, Any]
"""A tool as offered to the model, in the chat-completions ``tools`` format."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call requested by the model; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    cache_point: bool = False
    """The prompt up to and including this message repeats on the next request, so a
    provider with explicit caching (Anthropic's ``cache_control``) caches it."""


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the provider for one request."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    """Prompt tokens the provider read from its cache (included in ``prompt_tokens``):
    ``prompt_tokens_details.cached_tokens`` of chat completions, Anthropic's
    ``cache_read_input_tokens``."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class LLMResponse:
    """The model's answer: text, tool calls, or both."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = field(default=())
    usage: Usage | None = None
    model: str = ""
    finish_reason: FinishReason | None = None
    """None when the provider did not say (fakes and the offline model)."""


class Sampling(TypedDict, total=False):
    """How one request is sampled: the keyword options of :meth:`LLM.complete`.

    Every key may be left out or None: the adapter's or the provider's default then
    applies. Stated once here, so the port, the adapters, the fakes and the tracing
    wrapper take and pass on the same options (``**sampling: Unpack[Sampling]``).

    Attributes:
        max_tokens: Most tokens in the reply.
        temperature: Sampling temperature.
    """

    max_tokens: int | None
    temperature: float | None


@runtime_checkable
class LLM(Protocol):
    """A chat model. Adapters map vendor errors to :class:`mindspace.errors.LLMError`."""

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        **sampling: Unpack[Sampling],
    ) -> LLMResponse:
        """Answer the conversation, optionally calling some of ``tools``."""
        ...


def clean_response(response: LLMResponse) -> tuple[LLMResponse, int]:
    """``response`` with every lone surrogate and NUL in its text and tool calls replaced.

    A model's output is not refused like a person's input (nobody could fix it); the
    characters become U+FFFD so it can be stored, sent and shown. Tool-call arguments
    are raw JSON text: an escaped ``"\\u0000"`` in them is caught when they are parsed
    (the tool refuses the argument, as for any caller).

    Returns:
        The cleaned response (the same object when nothing changed) and how many
        characters were replaced.
    """
    text, count = replace_not_text(response.text) if response.text else (response.text, 0)
    calls: list[ToolCall] = []
    for call in response.tool_calls:
        name, a = replace_not_text(call.name)
        arguments, b = replace_not_text(call.arguments)
        call_id, c = replace_not_text(call.id)
        count += a + b + c
        calls.append(ToolCall(call_id, name, arguments) if a + b + c else call)
    if not count:
        return response, 0
    return replace(response, text=text, tool_calls=tuple(calls)), count


async def close_llm(llm: LLM) -> None:
    """Close the model's connections if it holds any (adapters define ``aclose``).

    Long-running hosts call this once, on the event loop the model was used on, before
    that loop ends; an HTTP client must not outlive its loop.
    """
    closer = getattr(llm, "aclose", None)
    if closer is not None:
        await closer()
