"""The LLM port, and the models shipped in the package: offline, scripted, function-backed.

The names are imported on first use (PEP 562): the core imports ``llm.port`` alone, and
that must not load the offline model (which itself uses the journal and workspace).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the module."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mindspace.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
