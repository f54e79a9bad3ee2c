"""Working memory (tier 3): the active conversation with each entity."""

from __future__ import annotations

from datetime import timedelta

from mindspace.clock import Clock, format_time, parse_time
from mindspace.memory.records import Conversation, WorkingMemory
from mindspace.state.unit import Unit

__all__ = ["MAX_WORKING_MESSAGES", "WorkingMemoryBook"]

MAX_WORKING_MESSAGES = 10


class WorkingMemoryBook:
    """Working memory operations within one unit of work."""

    def __init__(self, unit: Unit, clock: Clock) -> None:
        self.unit = unit
        self.clock = clock

    def read(self) -> WorkingMemory:
        """All active conversations."""
        return self.unit.doc(WorkingMemory)

    def note_message(self, entity_id: str, text: str, *, topic: str | None = None) -> Conversation:
        """Add a message from ``entity_id``; a conversation starts if none is active."""
        now = format_time(self.clock.now())
        memory = self.read()
        current = memory.conversations.get(entity_id)
        if current is None:
            current = Conversation(
                topic=topic or _topic_of(text), started_at=now, last_message_at=now
            )
        messages = (*current.messages, text)[-MAX_WORKING_MESSAGES:]
        current = current.model_copy(
            update={
                "messages": messages,
                "last_message_at": now,
                **({"topic": topic} if topic else {}),
            }
        )
        self.unit.put_doc(
            memory.model_copy(
                update={"conversations": {**memory.conversations, entity_id: current}}
            )
        )
        return current

    def set_pending_actions(self, entity_id: str, actions: tuple[str, ...]) -> None:
        """Replace what is still to be done for ``entity_id``."""
        memory = self.read()
        current = memory.conversations.get(entity_id)
        if current is None:
            return
        updated = current.model_copy(update={"pending_actions": actions})
        self.unit.put_doc(
            memory.model_copy(
                update={"conversations": {**memory.conversations, entity_id: updated}}
            )
        )

    def clear_stale_conversations(self, max_age: timedelta) -> list[str]:
        """End conversations idle for longer than ``max_age``; returns their entity ids."""
        now = self.clock.now()
        memory = self.read()
        stale = [
            entity
            for entity, c in memory.conversations.items()
            if now - parse_time(c.last_message_at) > max_age
        ]
        if stale:
            kept = {e: c for e, c in memory.conversations.items() if e not in stale}
            self.unit.put_doc(WorkingMemory(conversations=kept))
        return stale

    def render(self, entity_id: str) -> str:
        """The conversation with ``entity_id`` for the prompt."""
        current = self.read().conversations.get(entity_id)
        if current is None:
            return ""
        text = f"Conversation with {entity_id} about {current.topic!r} since {current.started_at}"
        if current.pending_actions:
            text += "\n  pending: " + "; ".join(current.pending_actions)
        return text


def _topic_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:8]) + ("..." if len(words) > 8 else "")
