"""mindspace: a runtime for long-lived LLM assistants that manage their own workspace.

The public names below are imported on first use (PEP 562), so ``import mindspace`` and
``mindspace --help`` do not load the engine, SQLAlchemy or a model SDK until they are
needed; ``from mindspace import open_assistant, Assistant`` works as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindspace.lazy import lazy_exports

if TYPE_CHECKING:
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

# Each public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "Assistant": "mindspace.engine.assistant",
    "Clock": "mindspace.clock",
    "FunctionLLM": "mindspace.llm",
    "ManualClock": "mindspace.clock",
    "MindspaceError": "mindspace.errors",
    "OfflineLLM": "mindspace.llm",
    "ScriptedLLM": "mindspace.llm",
    "Settings": "mindspace.config",
    "SystemClock": "mindspace.clock",
    "Tool": "mindspace.tools",
    "ToolCategory": "mindspace.tools",
    "ToolError": "mindspace.errors",
    "open_assistant": "mindspace.runtime",
    "open_store": "mindspace.runtime",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
