"""The LLM port, and the models shipped in the package: offline, scripted, function-backed.

The names are imported on first use (PEP 562): the core imports ``llm.port`` alone, and
that must not load the offline model (which itself uses the journal and workspace).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindspace.lazy import lazy_exports

if TYPE_CHECKING:
    from mindspace.llm.offline import OFFLINE_MODEL_NAME, OFFLINE_NOTICE, OfflineLLM
    from mindspace.llm.port import LLM, LLMResponse, Message, Role, ToolCall, ToolSchema, Usage
    from mindspace.llm.scripted import FunctionLLM, LLMCall, ScriptedLLM

__all__ = [
    "LLM",
    "OFFLINE_MODEL_NAME",
    "OFFLINE_NOTICE",
    "FunctionLLM",
    "LLMCall",
    "LLMResponse",
    "Message",
    "OfflineLLM",
    "Role",
    "ScriptedLLM",
    "ToolCall",
    "ToolSchema",
    "Usage",
]

# Each public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "LLM": "mindspace.llm.port",
    "OFFLINE_MODEL_NAME": "mindspace.llm.offline",
    "OFFLINE_NOTICE": "mindspace.llm.offline",
    "FunctionLLM": "mindspace.llm.scripted",
    "LLMCall": "mindspace.llm.scripted",
    "LLMResponse": "mindspace.llm.port",
    "Message": "mindspace.llm.port",
    "OfflineLLM": "mindspace.llm.offline",
    "Role": "mindspace.llm.port",
    "ScriptedLLM": "mindspace.llm.scripted",
    "ToolCall": "mindspace.llm.port",
    "ToolSchema": "mindspace.llm.port",
    "Usage": "mindspace.llm.port",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
