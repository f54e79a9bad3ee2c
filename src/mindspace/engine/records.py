"""The engine's persisted shapes: events, conversation messages, approvals, engine state."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from mindspace.state.models import Document, Record

__all__ = [
    "AMBIENT",
    "URGENT_CLASSIFICATIONS",
    "Approval",
    "ApprovalStatus",
    "BufferedMessage",
    "ContextBuffer",
    "ConversationMessage",
    "EngineState",
    "Event",
    "EventMetadata",
    "EventStatus",
    "StoredToolCall",
]

EventStatus = Literal["pending", "processing", "done", "failed"]
ApprovalStatus = Literal["pending", "approved", "rejected", "failed"]

AMBIENT = "ambient"
URGENT_CLASSIFICATIONS = frozenset({"direct_addressing", "direct_message"})


class EventMetadata(BaseModel):
    """What a host may tell the engine about an event, beside its text.

    The fields the engine reads are typed here; a host may add its own keys, which are
    kept with the event and ignored by the engine. Values of the wrong type are read as
    absent (they are refused when the event is enqueued).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    priority: int = 5
    """0-10; 8 or more is urgent."""
    urgent: bool = False
    """Urgent events go first and wake a light sleeper."""
    classification: str | None = None
    """``ambient``, ``direct_addressing``, ``direct_message``... (see spec 004)."""
    topic: str | None = None
    """What the conversation is about, for working memory."""
    present: tuple[str, ...] = ()
    """Who else is present (names), for the prompt."""
    event_class: str | None = None
    """A host's (or a classifier's) class of the event, for the execution pattern."""
    ref: str | None = None
    """The host's own reference for what was said (a message or dialog id): the memories
    formed from the event keep it as their ``ref`` (default ``event:<event id>``)."""

    @classmethod
    def read(cls, raw: dict[str, Any]) -> EventMetadata:
        """The typed view of a stored metadata dict; mistyped engine fields read as absent."""
        fields: dict[str, Any] = {}
        priority = raw.get("priority")
        if isinstance(priority, int) and not isinstance(priority, bool):
            fields["priority"] = priority
        if isinstance(raw.get("urgent"), bool):
            fields["urgent"] = raw["urgent"]
        for name in ("classification", "topic", "event_class", "ref"):
            if isinstance(raw.get(name), str):
                fields[name] = raw[name]
        present = raw.get("present")
        if isinstance(present, list | tuple):
            fields["present"] = tuple(str(p) for p in present)
        return cls(**fields)


class Event(Record):
    """Something that happened in the host and may need the assistant's attention."""

    kind: ClassVar[str] = "event"

    id: str
    type: str
    source_entity: str | None = None
    content: str
    location: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str
    updated_at: str
    status: EventStatus = "pending"
    attempts: int = 0
    error: str | None = None
    reply: str | None = None

    @property
    def meta(self) -> EventMetadata:
        """The metadata, typed."""
        return EventMetadata.read(self.metadata)

    @property
    def priority(self) -> int:
        """``metadata.priority`` (5 when absent or not a number)."""
        return self.meta.priority

    @property
    def classification(self) -> str | None:
        """``metadata.classification``, if any."""
        return self.meta.classification

    @property
    def private(self) -> bool:
        """A whisper or direct message: the reply goes to the speaker only."""
        return self.type == "whisper" or self.classification == "direct_message"

    @property
    def ambient(self) -> bool:
        """Ambient messages feed the context buffer instead of a tick."""
        return self.classification == AMBIENT

    @property
    def urgent(self) -> bool:
        """Urgent events go first (and wake a light sleeper)."""
        meta = self.meta
        return meta.urgent or meta.priority >= 8 or meta.classification in URGENT_CLASSIFICATIONS


class StoredToolCall(Document):
    """A tool call as kept in conversation history."""

    name: ClassVar[str] = "tool_call"

    id: str
    tool: str
    arguments: str


class ConversationMessage(Record):
    """One message of the conversation with an entity (``""`` is the assistant's own thread)."""

    kind: ClassVar[str] = "message"

    id: str
    entity: str
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: tuple[StoredToolCall, ...] = ()
    tool_call_id: str | None = None
    created_at: str


class Approval(Record):
    """A DANGEROUS tool call waiting for a host or an admin."""

    kind: ClassVar[str] = "approval"

    id: str
    tool: str
    arguments: str
    event_id: str | None = None
    requested_at: str
    status: ApprovalStatus = "pending"
    decided_by: str | None = None
    decided_at: str | None = None
    result: dict[str, Any] | None = None


class BufferedMessage(Document):
    """One ambient message in the context buffer."""

    name: ClassVar[str] = "buffered_message"

    at: str
    source: str | None = None
    text: str


class ContextBuffer(Document):
    """Recent ambient messages, newest last."""

    name: ClassVar[str] = "context_buffer"

    messages: tuple[BufferedMessage, ...] = ()


class EngineState(Document):
    """What the engine carries from one tick to the next."""

    name: ClassVar[str] = "engine_state"

    recent_errors: int = 0
    last_autonomous_at: str | None = None
    last_tool_result: str | None = None
    next_message: int = 0
    next_approval: int = 0
