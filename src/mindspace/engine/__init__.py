"""The engine: the Assistant facade (and, with later issues, ticks and the ReAct loop)."""

from mindspace.engine.assistant import Assistant, assistant_tools

__all__ = ["Assistant", "assistant_tools"]
