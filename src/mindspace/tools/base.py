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
    ...     async def execute(self, ctx, args):
    ...         return {"success": True}
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.errors import ToolFailedError
from mindspace.limits import MAX_TEXT_CHARS
from mindspace.llm.port import LLM, ToolSchema
from mindspace.memory.entities import EntityBook
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.semantic import JournalIndex, SemanticIndex
from mindspace.state.unit import Unit
from mindspace.tools.limits import Limit, limit_of
from mindspace.tools.side import SideSessions
from mindspace.validation import find_invalid_text
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.projects import ProjectDesk
from mindspace.workspace.prompts import PromptDesk
from mindspace.workspace.session_memory import SessionMemoryBook
from mindspace.workspace.status import LoopSnapshot

__all__ = ["NoArgs", "Tool", "ToolArgs", "ToolCategory", "ToolContext", "empty_argument"]


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
    """Base of argument models: strict JSON types, no unknown fields, and bounded text.

    Every field passes the input boundary (:mod:`mindspace.validation`): strings must be
    valid Unicode and within the field's :class:`~mindspace.tools.limits.Limit` (or
    ``MAX_TEXT_CHARS``), lists within their item count. Validation under
    ``context={"settings": settings}`` takes setting-based limits from those settings.
    """

    model_config = ConfigDict(strict=True, extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _within_the_boundary(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name or "(argument)"
        limit = _field_limit(cls, name)
        settings = (info.context or {}).get("settings")
        max_chars = limit.max_chars(settings) if limit is not None else MAX_TEXT_CHARS
        items = limit.items if limit is not None else None
        if items is not None and isinstance(value, list) and len(value) > items:
            raise ValueError(f"{name!r} has {len(value):,} items; the limit is {items:,}")
        found = find_invalid_text(value, name, max_chars=None)
        if found is not None:
            raise ValueError(f"{found[0]!r} {found[1]}")
        strings = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for index, text in enumerate(strings):
            # counted as the tools store it: without surrounding space
            length = len(text.strip()) if isinstance(text, str) else 0
            if length > max_chars:
                where = name if isinstance(value, str) else f"{name}[{index}]"
                raise ValueError(
                    f"{where!r} is {length:,} characters long; the limit is {max_chars:,}"
                )
        return value


_LIMITS: dict[tuple[type[ToolArgs], str], Limit | None] = {}


def _field_limit(model: type[ToolArgs], name: str) -> Limit | None:
    # looked up once per field: argument models do not change after import
    key = (model, name)
    if key not in _LIMITS:
        field = model.model_fields.get(name)
        _LIMITS[key] = limit_of(field) if field is not None else None
    return _LIMITS[key]


def empty_argument(name: str, suggestion: str) -> dict[str, Any]:
    """The result for a required text argument that is blank once stripped."""
    return {"success": False, "error": f"{name!r} is empty", "suggestion": suggestion}


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
    memory_index: SemanticIndex | None = None
    journal_index: JournalIndex | None = None
    approved_by: str | None = None
    """Who approved this call, when it runs because a host or an admin approved it."""
    side: SideSessions | None = None
    """Runs side sessions (a context of their own, sub-agents); None outside the engine."""

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
                "Open the assistant through Runtime.open so its memory index exists.",
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

    Subclasses set ``name``, ``description`` and ``category`` and implement
    :meth:`execute`; ``args_model`` is the arguments model they subclass ``Tool`` with
    (``Tool[SayArgs]``) unless they set it. A cacheable tool names the state topics it
    ``reads`` (record kinds, or ``doc:<name>`` for documents) so a write to them drops
    its cache.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    category: ClassVar[ToolCategory]
    args_model: type[A]
    cacheable: ClassVar[bool] = False
    cache_ttl: ClassVar[float | None] = None
    reads: ClassVar[frozenset[str]] = frozenset()
    needs_sub_agents: ClassVar[bool] = False
    """Offered only where the execution pattern allows sub-agents (``delegate_subtask``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "args_model" in cls.__dict__:
            return
        # the arguments model is the one the class names in its base: Tool[SayArgs]
        for base in cls.__dict__.get("__orig_bases__", ()):
            for arg in get_args(base):
                if isinstance(arg, type) and issubclass(arg, ToolArgs):
                    model: type[Any] = arg
                    cls.args_model = model
                    return

    @abstractmethod
    async def execute(self, ctx: ToolContext, args: A) -> dict[str, Any]:
        """Run the tool; return the spec's result dict or raise a ToolError."""

    def schema(self) -> ToolSchema:
        """The tool in the chat-completions ``tools`` format (a fresh copy each call).

        Building the JSON schema with pydantic is slow (it was a third of a tick's CPU),
        so it is built once per tool and kept as JSON text; the copy keeps callers from
        changing the cached schema.
        """
        copy: ToolSchema = json.loads(self.schema_json())
        return copy

    def schema_json(self) -> str:
        """:meth:`schema` as JSON text, built once per tool (shared: never parse and mutate).

        Shared by every instance with the same name, description and arguments: a
        worker opens hundreds of assistants, each with its own tools, and building
        their schemas on each one's first tick cost more than the tick.
        """
        return _schema_json(self.name, self.description, self.args_model)


@functools.lru_cache(maxsize=1024)
def _schema_json(name: str, description: str, args_model: type[BaseModel]) -> str:
    parameters = args_model.model_json_schema()
    parameters.pop("title", None)
    parameters.setdefault("properties", {})
    schema = {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }
    return json.dumps(schema)
