"""The engine: the Assistant facade (and, with later issues, ticks and the ReAct loop)."""

from mindspace.engine.assistant import Assistant

__all__ = ["Assistant"]
