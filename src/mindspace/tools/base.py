"""The Tool base class, its categories, and the context a tool runs in.

A tool is a name, a category, a pydantic arguments model (whose JSON schema is what
the LLM sees) and an async ``execute``. Tools return the spec's result dicts and raise
:class:`~mindspace.errors.ToolError` for anything the model can fix; the framework turns
those into results in the spec's error shape.

Example:
    >>> class Noop(Tool[NoArgs]):
    ...     name = "noop"
    ...     description = "Do nothing this turn."
    ...     category = ToolCategory.TERMINAL
    ...     args_model = NoArgs
    ...     async def execute(self, ctx, args):
    ...         return {"success": True}
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.errors import ToolFailedError
from mindspace.llm.port import LLM, ToolSchema
from mindspace.memory.entities import EntityBook
from mindspace.memory.index import MemoryIndex
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.unit import Unit
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.projects import ProjectDesk
from mindspace.workspace.prompts import PromptDesk
from mindspace.workspace.session_memory import SessionMemoryBook
from mindspace.workspace.status import LoopSnapshot

__all__ = ["NoArgs", "Tool", "ToolArgs", "ToolCategory", "ToolContext"]


class ToolCategory(StrEnum):
    """How the ReAct loop treats a tool's call."""

    SAFE_CHAIN = "SAFE_CHAIN"
    """Read or reversible; the loop continues after it."""
    TERMINAL = "TERMINAL"
    """Ends the loop (a reply was given, or nothing more to do)."""
    DANGEROUS = "DANGEROUS"
    """Changes the world irreversibly; may need approval first."""
    ASYNC_REQUIRED = "ASYNC_REQUIRED"
    """Awaits its own slow work (an LLM call) before returning."""


class ToolArgs(BaseModel):
    """Base of argument models: strict JSON types and no unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid")


class NoArgs(ToolArgs):
    """A tool that takes no arguments."""


@dataclass
class ToolContext:
    """Everything a tool may use while it runs; writes go to ``unit`` only."""

    unit: Unit
    clock: Clock
    settings: Settings
    llm: LLM
    guard: PersonaGuard
    assistant_key: str
    loop: LoopSnapshot = field(default_factory=LoopSnapshot)
    embedder: Embedder | None = None
    memory_index: MemoryIndex | None = None

    @property
    def goals(self) -> GoalBook:
        """Goal operations."""
        return GoalBook(self.unit, self.clock, self.settings)

    @property
    def projects(self) -> ProjectDesk:
        """Project operations."""
        return ProjectDesk(self.unit, self.clock, self.settings)

    @property
    def session_memory(self) -> SessionMemoryBook:
        """Session memory operations."""
        return SessionMemoryBook(self.unit, self.clock, self.settings, self.guard)

    @property
    def semantic(self) -> SemanticMemory:
        """Semantic memory operations (tier 1)."""
        if self.memory_index is None:
            raise ToolFailedError(
                "Semantic memory is not available to this assistant",
                "Open the assistant through Assistant.open so its memory index exists.",
            )
        return SemanticMemory(
            self.unit, self.clock, self.settings, self.embedder, self.memory_index
        )

    @property
    def entities(self) -> EntityBook:
        """Entity profile operations (tier 2)."""
        return EntityBook(self.unit, self.clock, self.settings, self.guard)

    @property
    def prompts(self) -> PromptDesk:
        """System prompt operations."""
        return PromptDesk(self.unit, self.clock, self.settings)


A = TypeVar("A", bound=ToolArgs)


class Tool(ABC, Generic[A]):
    """A tool the assistant can call.

    Subclasses set ``name``, ``description``, ``category`` and ``args_model`` and
    implement :meth:`execute`. A cacheable tool names the state topics it ``reads``
    (record kinds, or ``doc:<name>`` for documents) so a write to them drops its cache.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    category: ClassVar[ToolCategory]
    args_model: type[A]
    cacheable: ClassVar[bool] = False
    cache_ttl: ClassVar[float | None] = None
    reads: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    async def execute(self, ctx: ToolContext, args: A) -> dict[str, Any]:
        """Run the tool; return the spec's result dict or raise a ToolError."""

    def schema(self) -> ToolSchema:
        """The tool in the chat-completions ``tools`` format (a fresh copy each call).

        Building the JSON schema with pydantic is slow (it was a third of a tick's CPU),
        so it is built once per tool and kept as JSON text; the copy keeps callers from
        changing the cached schema.
        """
        key = (self.name, self.description, self.args_model)
        cached = self.__dict__.get("_schema_cache")
        if cached is None or cached[0] != key:
            parameters = self.args_model.model_json_schema()
            parameters.pop("title", None)
            parameters.setdefault("properties", {})
            schema = {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": parameters,
                },
            }
            cached = (key, json.dumps(schema))
            self.__dict__["_schema_cache"] = cached
        copy: ToolSchema = json.loads(cached[1])
        return copy
