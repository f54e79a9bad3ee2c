"""The persistent event queue: hosts enqueue, ticks take urgent events first.

Processing is at-least-once and never redoes a completed event: a tick marks its
event ``processing`` (and counts the attempt) before working, in the commit that keeps
the speaker's words as memory before the model is called, and marks it ``done`` in the
same commit as everything the tick changed. A crash in between leaves the event
``processing`` with nothing of the tick stored but those words, so the next tick runs it
again from the start; after ``max_event_attempts`` crashes it is marked ``failed``. (A
crash before that first commit, while the words are embedded, is not counted: the event
runs again as if never taken. A formation that fails with an error is counted.)
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any, TypedDict

from mindspace.clock import Clock, format_time
from mindspace.engine.records import Event
from mindspace.errors import InvalidInputError
from mindspace.limits import MAX_EVENT_CHARS, MAX_JSON_DEPTH
from mindspace.state.port import Store, StoredRecord, TickStart
from mindspace.validation import find_invalid_text

__all__ = ["EVENT_TYPE_PATTERN", "EventFields", "EventQueue", "urgency_order"]

EVENT_TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
MAX_ENTITY_CHARS = 128


class EventFields(TypedDict, total=False):
    """An event's optional fields besides its content, as :meth:`EventQueue.enqueue` takes them.

    A wrapper that passes an event on takes them as ``**fields: Unpack[EventFields]``, so
    the list is written once. Omitted, ``type`` is ``"message"`` and the rest are none.
    """

    type: str
    source_entity: str | None
    location: str | None
    metadata: Mapping[str, Any] | None


def _check_text(fields: Mapping[str, Any]) -> None:
    # Host events are the other door text comes in by: the same rule as tool arguments,
    # so nothing unencodable is queued (a lone surrogate would fail every later tick).
    if _nesting(fields["metadata"]) > MAX_JSON_DEPTH:
        raise InvalidInputError(
            f"Event metadata nests deeper than {MAX_JSON_DEPTH} levels",
            "Send metadata as a flat object of simple values.",
        )
    found = find_invalid_text(fields, max_chars=None) or find_invalid_text(
        fields["metadata"], "metadata"
    )
    if found is not None:
        where, problem = found
        raise InvalidInputError(
            f"Event {where!r} {problem}", "Fix the text and enqueue the event again."
        )


def _nesting(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def urgency_order(event: Event, position: int) -> tuple[int, int, int]:
    """Sort key: urgent events first, then higher priority, then arrival order."""
    return (0 if event.urgent else 1, -event.priority, position)


def _by_urgency(rows: list[StoredRecord]) -> list[Event]:
    events = [Event.from_stored(row) for row in rows]
    return [e for _, e in sorted(enumerate(events), key=lambda p: urgency_order(p[1], p[0]))]


class EventQueue:
    """The event inbox of one assistant.

    Args:
        store: Where events live.
        assistant_id: Whose events.
        clock: The time source for timestamps.
    """

    def __init__(self, store: Store, assistant_id: int, clock: Clock) -> None:
        self.store = store
        self.assistant_id = assistant_id
        self.clock = clock

    def enqueue(
        self,
        content: str,
        *,
        type: str = "message",
        source_entity: str | None = None,
        location: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Event:
        """Validate and store a new pending event.

        Raises:
            InvalidInputError: empty or oversized content, text that is not valid
                Unicode (a lone surrogate) anywhere, metadata nested deeper than
                ``MAX_JSON_DEPTH``, a malformed type or entity, or metadata with an invalid
                ``priority``/``urgent``.
        """
        _check_text(
            {
                "content": content,
                "type": type,
                "source_entity": source_entity,
                "location": location,
                "metadata": dict(metadata or {}),
            }
        )
        text = content.strip()
        if not text:
            raise InvalidInputError("Event content is empty", "Send the text of the event.")
        if len(text) > MAX_EVENT_CHARS:
            raise InvalidInputError(
                f"Event content is {len(text):,} characters; the limit is {MAX_EVENT_CHARS:,}",
                "Split the event or shorten it.",
            )
        if not re.match(EVENT_TYPE_PATTERN, type):
            raise InvalidInputError(
                f"Invalid event type {type!r}",
                "Use a lowercase word such as 'message', 'say', 'whisper' or 'arrival'.",
            )
        for name, value in (("source_entity", source_entity), ("location", location)):
            if value is not None and (not value.strip() or len(value) > MAX_ENTITY_CHARS):
                raise InvalidInputError(
                    f"Invalid {name} {value!r}",
                    f"Give {name} as 1-{MAX_ENTITY_CHARS} characters, or omit it.",
                )
        meta = dict(metadata or {})
        priority = meta.get("priority", 5)
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 10:
            raise InvalidInputError(
                f"metadata.priority must be a whole number 0-10, not {priority!r}",
                "Use 8 or more for urgent events, 5 for normal ones.",
            )
        if "urgent" in meta and not isinstance(meta["urgent"], bool):
            raise InvalidInputError(
                f"metadata.urgent must be true or false, not {meta['urgent']!r}",
                "Send a JSON boolean.",
            )
        now = format_time(self.clock.now())
        event = Event(
            id=f"evt_{uuid.uuid4().hex[:16]}",
            type=type,
            source_entity=source_entity,
            content=text,
            location=location,
            metadata=meta,
            created_at=now,
            updated_at=now,
        )
        self.store.enqueue(self.assistant_id, event.to_stored())
        return event

    def open(self, limit: int = 500) -> list[Event]:
        """Open events (pending or interrupted), most urgent first."""
        return _by_urgency(self.store.open_events(self.assistant_id, limit))

    def open_with_revision(self, limit: int = 500) -> tuple[int | None, list[Event]]:
        """:meth:`open`, and the assistant's revision read with the events.

        One round trip where the store reads both at once (the
        :class:`~mindspace.state.port.TickStart` port), as a tick starts; the revision
        is None when the store cannot, and the caller reads it apart.
        """
        if isinstance(self.store, TickStart):
            revision, rows = self.store.revision_and_open_events(self.assistant_id, limit)
            return revision, _by_urgency(rows)
        return None, self.open(limit)

    def get(self, event_id: str) -> Event | None:
        """One event by id."""
        row = self.store.find_event(self.assistant_id, event_id)
        return Event.from_stored(row) if row is not None else None

    def mark(self, event: Event, **changes: Any) -> Event:
        """Update an event outside a tick's commit (attempts, failure)."""
        updated = event.model_copy(update={**changes, "updated_at": format_time(self.clock.now())})
        fields = {k: v for k, v in updated.to_stored().items() if k in {*changes, "updated_at"}}
        self.store.update_event(self.assistant_id, event.id, fields)
        return updated
