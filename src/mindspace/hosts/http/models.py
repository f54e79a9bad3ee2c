"""Response models of the API, as documented in ``/openapi.json``.

The top-level fields of every success body are named and typed here; nested documents
(a tick record, an entity profile, the status) are typed loosely (``dict``) and allow
extra fields, so the engine can add a field without breaking the contract. List
responses extend :class:`~mindspace.hosts.http.contract.Page`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mindspace.hosts.http.contract import Page

__all__ = [
    "ApprovalList",
    "Approved",
    "AssistantList",
    "AssistantOut",
    "EntityList",
    "EntityOut",
    "EventList",
    "EventOut",
    "EventQueued",
    "EventView",
    "GoalTree",
    "Health",
    "JournalPage",
    "MemoryGraph",
    "MemoryPage",
    "ModeOut",
    "ProjectList",
    "Rejected",
    "SessionMemoryOut",
    "SleepOut",
    "StatusOut",
    "TickList",
    "TickOut",
    "TickRun",
    "ToolInfo",
    "ToolList",
    "ToolResult",
    "WakeOut",
    "WorkingMemoryOut",
]

Doc = dict[str, Any]


def _document(reason: str) -> ConfigDict:
    """Mark a response holding lists as one document, not a list to page (with why)."""
    return ConfigDict(extra="allow", json_schema_extra={"x-document": reason})


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")

    success: Literal[True] = True


class Health(_Out):
    """The server is up."""

    status: Literal["ok"] = "ok"
    version: str


class ToolInfo(BaseModel):
    """One tool: its name, category, description and the JSON schema of its arguments."""

    name: str
    category: str
    description: str
    parameters: Doc


class ToolList(Page):
    """A page of the tool catalogue."""

    tools: list[ToolInfo]


class ToolResult(BaseModel):
    """A tool's result in the spec's shape (``success`` true, then the tool's fields)."""

    model_config = ConfigDict(extra="allow")

    success: bool


class AssistantList(Page):
    """A page of the keys of the assistants this token may use."""

    assistants: list[str]


class AssistantOut(_Out):
    """One assistant at a glance: ``key``, ``mode``, ``token_usage``, ``counts``..."""

    assistant: Doc


class EventQueued(_Out):
    """The event is queued."""

    event_id: str
    status: str
    urgent: bool


class EventView(BaseModel):
    """An event, its status and its reply (or error)."""

    model_config = ConfigDict(extra="allow")

    event_id: str
    type: str
    source_entity: str | None
    content: str
    location: str | None
    metadata: Doc
    status: str = Field(description="pending, processing, done or failed.")
    attempts: int
    error: str | None
    reply: str | None
    urgent: bool
    created_at: str
    updated_at: str


class EventList(Page):
    """A page of the events not yet processed, most urgent first."""

    events: list[EventView]


class EventOut(_Out):
    """One event."""

    event: EventView


class TickRun(_Out):
    """The tick that ran, and its record as the context viewer shows it."""

    kind: str
    status: str
    event_id: str | None
    reply: str | None
    outcome: str | None
    cut: str | None
    error: str | None
    tick: Doc | None = Field(description="The tick's record (null for an idle tick).")


class TickList(Page):
    """A page of the recent ticks' summaries, newest first."""

    ticks: list[Doc]


class TickOut(_Out):
    """One tick's full record."""

    tick: Doc


class GoalTree(_Out):
    """Root goals with nested ``subtasks``; ``total`` counts every goal in the tree."""

    model_config = _document("one tree: subtasks nest under their roots")

    goals: list[Doc]
    counts: dict[str, int]
    total: int


class ProjectList(Page):
    """A page of the projects; ``active`` is the loaded one."""

    active: str | None
    projects: list[Doc]


class SessionMemoryOut(_Out):
    """Key facts, learned patterns and completed tasks."""

    model_config = _document("one bounded document, compacted by sleep")

    key_facts: list[Any]
    learned_patterns: list[Any]
    completed_tasks: list[Any]
    last_compacted: str | None


class JournalPage(Page):
    """A page of journal entries, with the reflection state."""

    entries: list[Doc]
    reflection: Doc
    max_entries: int


class MemoryPage(Page):
    """A page of memories: newest first, or for ``query`` ranked best first."""

    memories: list[Doc]
    query: str | None = Field(default=None, description="The query, when ranked.")


class MemoryGraph(_Out):
    """The A-MEM link graph: memories as ``nodes``, links with scores as ``edges``."""

    model_config = _document("one graph: edges need both of their nodes")

    nodes: list[Doc]
    edges: list[Doc]
    processed: int
    total_memories: int


class EntityList(Page):
    """A page of entity profiles, most recently seen first."""

    entities: list[Doc]


class EntityOut(_Out):
    """One entity profile."""

    entity: Doc


class WorkingMemoryOut(_Out):
    """Active conversations by entity."""

    conversations: dict[str, Doc]


class StatusOut(_Out):
    """What ``get_system_status`` reports."""

    timestamp: str
    token_usage: Doc
    token_advisory: Doc
    session_metrics: Doc
    night_backlog: Doc
    """The night's work left: ``unscored`` and ``unconsolidated`` journal entries,
    ``unlinked`` memories (the next sleep starts with them)."""


class ModeOut(_Out):
    """Mode, sleep phase and depth, tick rate and sleep schedule."""

    mode: str
    sleep_phase: str | None
    tick_rate: float
    schedule: Doc


class SleepOut(_Out):
    """Asleep: when it wakes by itself, and the mode."""

    wake_at: datetime | None
    mode: Doc


class WakeOut(_Out):
    """Awake: the mode."""

    mode: Doc


class ApprovalList(Page):
    """A page of the DANGEROUS tool calls waiting for a decision, oldest first."""

    approvals: list[Doc]


class Approved(_Out):
    """The approved call ran; its result."""

    approval_id: str
    result: Any = None


class Rejected(_Out):
    """The call was rejected and never runs."""

    approval_id: str
    status: Literal["rejected"] = "rejected"
