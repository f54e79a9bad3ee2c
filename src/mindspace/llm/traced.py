"""An LLM that traces every call: a wrapper at the LLM port, so no adapter changes.

Each :meth:`~TracedLLM.complete` opens an ``llm_call`` span on a
:class:`~mindspace.tracing.Tracer` with the OpenTelemetry GenAI semantic conventions'
attributes: ``gen_ai.operation.name`` (``chat``), ``gen_ai.system`` (and its newer name
``gen_ai.provider.name``), ``gen_ai.request.model``, the request's ``max_tokens`` and
``temperature``, and once the answer is in, ``gen_ai.response.model``,
``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens`` /
``output_tokens`` and ``gen_ai.usage.cache_read.input_tokens`` (prompt tokens the
provider read from its cache). The span's name is ``chat <model>``, as the conventions ask.

Everything else (``model``, ``aclose``, ``list_models``...) is the wrapped model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Unpack

from mindspace.llm.port import LLM, LLMResponse, Message, Sampling, ToolSchema
from mindspace.tracing import AttributeValue, Tracer

__all__ = ["TracedLLM", "scorer_label", "unwrap_llm"]


class TracedLLM:
    """Wraps ``inner`` so that each call is an ``llm_call`` span on ``tracer``.

    Args:
        inner: The model that answers.
        tracer: Where the spans go.
        system: The provider's name for ``gen_ai.system`` (``openai``, ``offline``...).
        model: The requested model, when ``inner`` has no ``model`` attribute.
    """

    def __init__(
        self, inner: LLM, tracer: Tracer, *, system: str, model: str | None = None
    ) -> None:
        self.inner = inner
        self.tracer = tracer
        self.system = system
        self.request_model = str(getattr(inner, "model", None) or model or "")

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this wrapper lacks: the wrapped model answers them.
        if name == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        **sampling: Unpack[Sampling],
    ) -> LLMResponse:
        """The wrapped model's answer, traced."""
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": self.system,
            "gen_ai.provider.name": self.system,
            "gen_ai.request.model": self.request_model,
        }
        max_tokens, temperature = sampling.get("max_tokens"), sampling.get("temperature")
        if max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = max_tokens
        if temperature is not None:
            attributes["gen_ai.request.temperature"] = temperature
        name = f"chat {self.request_model}" if self.request_model else "chat"
        with self.tracer.span("llm_call", name, attributes) as span:
            response = await self.inner.complete(messages, tools, **sampling)
            if response.model:
                span.set("gen_ai.response.model", response.model)
            if response.finish_reason is not None:
                span.set("gen_ai.response.finish_reasons", [response.finish_reason])
            if response.usage is not None:
                span.set("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
                span.set("gen_ai.usage.output_tokens", response.usage.completion_tokens)
                # The semantic conventions' name for prompt tokens read from the cache.
                span.set("gen_ai.usage.cache_read.input_tokens", response.usage.cached_tokens)
            span.set("mindspace.llm.tool_calls", len(response.tool_calls))
            return response


def scorer_label(llm: LLM) -> Literal["llm", "offline"]:
    """How a score from ``llm`` is labelled: ``offline`` for the rule-based stand-in.

    The offline model's importance ratings and mined facts are rules, not a model's
    judgement; labelling them ``llm`` would claim what did not happen.
    """
    inner = unwrap_llm(llm)
    return "offline" if getattr(inner, "model", None) == "mindspace-offline" else "llm"


def unwrap_llm(llm: LLM) -> LLM:
    """The model inside any tracing wrappers (for checks of the model's own type)."""
    while isinstance(llm, TracedLLM):
        llm = llm.inner
    return llm
