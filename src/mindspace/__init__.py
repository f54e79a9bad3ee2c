"""mindspace: a runtime for long-lived LLM assistants that manage their own workspace."""

from mindspace.clock import Clock, ManualClock, SystemClock
from mindspace.config import Settings
from mindspace.engine.assistant import Assistant
from mindspace.errors import MindspaceError, ToolError
from mindspace.llm import FunctionLLM, OfflineLLM, ScriptedLLM
from mindspace.runtime import open_assistant, open_store
from mindspace.tools import Tool, ToolCategory

__all__ = [
    "Assistant",
    "Clock",
    "FunctionLLM",
    "ManualClock",
    "MindspaceError",
    "OfflineLLM",
    "ScriptedLLM",
    "Settings",
    "SystemClock",
    "Tool",
    "ToolCategory",
    "ToolError",
    "__version__",
    "open_assistant",
    "open_store",
]

__version__ = "0.1.0"
