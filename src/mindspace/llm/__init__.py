"""The LLM port, the parsing of model output, and the fakes shipped for tests.

The wing has three rooms, each its own import path (docs/architecture.md, "The LLM wing"):

* this package: the port (:mod:`mindspace.llm.port`), the fakes that implement it
  (:mod:`mindspace.llm.scripted`) and the tracing wrapper (:mod:`mindspace.llm.traced`);
* :mod:`mindspace.llm.parsing`: reading structured answers and tool calls written as text,
  which the core uses;
* :mod:`mindspace.llm.providers`: the vendor adapters (OpenAI-compatible, Anthropic), which
  only the composition root builds.

The offline model lives above the domain, in :mod:`mindspace.offline`. Nothing here imports
an adapter or the domain, so the names below are imported eagerly and cheaply.
"""

from __future__ import annotations

from mindspace.llm.port import LLM, LLMResponse, Message, Role, ToolCall, ToolSchema, Usage
from mindspace.llm.scripted import FunctionLLM, LLMCall, ScriptedLLM

__all__ = [
    "LLM",
    "FunctionLLM",
    "LLMCall",
    "LLMResponse",
    "Message",
    "Role",
    "ScriptedLLM",
    "ToolCall",
    "ToolSchema",
    "Usage",
]
