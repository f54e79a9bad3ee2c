"""mindspace: a runtime for long-lived LLM assistants that manage their own workspace.

The public names below are imported on first use (PEP 562), so ``import mindspace`` and
``mindspace --help`` do not load the engine, SQLAlchemy or a model SDK until they are
needed; ``from mindspace import open_assistant, Assistant`` works as usual.

What an integrator needs: the assistant and how to open one (:class:`Runtime`, the
composition root, or :func:`open_assistant`; :func:`open_store`, :class:`Settings`), the
ports to implement (:class:`LLM`, :class:`Embedder`, :class:`Store`, :class:`World`,
:class:`Clock`, :class:`Tool`), the errors to catch (all derive from
:class:`MindspaceError`), and models for tests (:class:`ScriptedLLM`,
:class:`FunctionLLM`, :class:`OfflineLLM`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindspace.lazy import lazy_exports

if TYPE_CHECKING:
    from mindspace.clock import Clock, ManualClock, SystemClock
    from mindspace.config import Settings
    from mindspace.embeddings.port import Embedder
    from mindspace.engine.assistant import Assistant
    from mindspace.engine.world import World
    from mindspace.errors import (
        AssistantNotFoundError,
        ConcurrencyError,
        ConfigError,
        EmbeddingError,
        InvalidInputError,
        LLMError,
        MindspaceError,
        RecordNotFoundError,
        StorageError,
        ToolError,
    )
    from mindspace.llm import FunctionLLM, ScriptedLLM
    from mindspace.llm.port import LLM
    from mindspace.offline import OfflineLLM
    from mindspace.runtime import Runtime, open_assistant, open_store
    from mindspace.state.port import Store
    from mindspace.tools import Tool, ToolCategory

__all__ = [
    "LLM",
    "Assistant",
    "AssistantNotFoundError",
    "Clock",
    "ConcurrencyError",
    "ConfigError",
    "Embedder",
    "EmbeddingError",
    "FunctionLLM",
    "InvalidInputError",
    "LLMError",
    "ManualClock",
    "MindspaceError",
    "OfflineLLM",
    "RecordNotFoundError",
    "Runtime",
    "ScriptedLLM",
    "Settings",
    "StorageError",
    "Store",
    "SystemClock",
    "Tool",
    "ToolCategory",
    "ToolError",
    "World",
    "__version__",
    "open_assistant",
    "open_store",
]

__version__ = "0.1.0"

# Each public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "LLM": "mindspace.llm.port",
    "Assistant": "mindspace.engine.assistant",
    "AssistantNotFoundError": "mindspace.errors",
    "Clock": "mindspace.clock",
    "ConcurrencyError": "mindspace.errors",
    "ConfigError": "mindspace.errors",
    "Embedder": "mindspace.embeddings.port",
    "EmbeddingError": "mindspace.errors",
    "FunctionLLM": "mindspace.llm",
    "InvalidInputError": "mindspace.errors",
    "LLMError": "mindspace.errors",
    "ManualClock": "mindspace.clock",
    "MindspaceError": "mindspace.errors",
    "OfflineLLM": "mindspace.offline",
    "RecordNotFoundError": "mindspace.errors",
    "Runtime": "mindspace.runtime",
    "ScriptedLLM": "mindspace.llm",
    "Settings": "mindspace.config",
    "StorageError": "mindspace.errors",
    "Store": "mindspace.state.port",
    "SystemClock": "mindspace.clock",
    "Tool": "mindspace.tools",
    "ToolCategory": "mindspace.tools",
    "ToolError": "mindspace.errors",
    "World": "mindspace.engine.world",
    "open_assistant": "mindspace.runtime",
    "open_store": "mindspace.runtime",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
