"""The LLM port, and the models shipped in the package: offline, scripted, function-backed."""

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
