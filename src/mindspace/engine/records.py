"""The engine's persisted shapes: events, conversation messages, approvals, engine state."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

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
    "EventStatus",
    "StoredToolCall",
]

EventStatus = Literal["pending", "processing", "done", "failed"]
ApprovalStatus = Literal["pending", "approved", "rejected", "failed"]

AMBIENT = "ambient"
URGENT_CLASSIFICATIONS = frozenset({"direct_addressing", "direct_message"})


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

    def record_key(self) -> str:
        """Events are keyed by id."""
        return self.id

    @property
    def priority(self) -> int:
        """``metadata.priority`` (5 when absent or not a number)."""
        value = self.metadata.get("priority", 5)
        return value if isinstance(value, int) and not isinstance(value, bool) else 5

    @property
    def classification(self) -> str | None:
        """``metadata.classification``, if any."""
        value = self.metadata.get("classification")
        return value if isinstance(value, str) else None

    @property
    def ambient(self) -> bool:
        """Ambient messages feed the context buffer instead of a tick."""
        return self.classification == AMBIENT

    @property
    def urgent(self) -> bool:
        """Urgent events go first (and wake a light sleeper)."""
        return (
            self.metadata.get("urgent") is True
            or self.priority >= 8
            or self.classification in URGENT_CLASSIFICATIONS
        )


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

    def record_key(self) -> str:
        """Messages are keyed by id."""
        return self.id


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

    def record_key(self) -> str:
        """Approvals are keyed by id."""
        return self.id


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
