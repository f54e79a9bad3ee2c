"""What a tick records: the conversation it adds, whom its reply answers, its count.

Split from :mod:`mindspace.engine.tick` (which runs the tick): these turn what a session
did into stored records.
"""

from __future__ import annotations

from typing import Any

from mindspace.clock import Clock, format_time
from mindspace.engine.loop import LoopResult
from mindspace.engine.modes import (
    OperatingMode,
    SleepSchedule,
    check_sleep_schedule,
    transition_mode,
)
from mindspace.engine.records import ConversationMessage, EngineState, Event, StoredToolCall
from mindspace.limits import MAX_TEXT_CHARS
from mindspace.llm.port import Message
from mindspace.state.unit import Unit

__all__ = ["count_awake_tick", "event_assessment", "kept", "remember", "reply_target"]


def remember(unit: Unit, clock: Clock, entity: str, event: Event | None, loop: LoopResult) -> None:
    """Append the event's words and the loop's transcript to the conversation in ``unit``."""
    now = format_time(clock.now())
    state = unit.doc(EngineState)
    number = state.next_message
    new: list[Message] = []
    if event is not None:
        new.append(Message("user", event.content))
    new.extend(loop.transcript)
    for message in new:
        number += 1
        unit.put(
            ConversationMessage(
                id=f"m{number}",
                entity=entity,
                role=message.role,
                content=kept(message.content),
                tool_calls=tuple(
                    StoredToolCall(id=c.id, tool=c.name, arguments=kept(c.arguments) or "")
                    for c in message.tool_calls
                ),
                tool_call_id=message.tool_call_id,
                created_at=now,
            )
        )
    unit.put_doc(state.model_copy(update={"next_message": number}))


def kept(text: str | None) -> str | None:
    """What the conversation keeps of a message's text: at most MAX_TEXT_CHARS.

    The model's tool-call arguments are unbounded (a tool refuses an over-long one, and
    says why); the thread keeps their start, so every stored string can be exported and
    imported again.
    """
    if text is None or len(text) <= MAX_TEXT_CHARS:
        return text
    marker = f" [... {len(text) - MAX_TEXT_CHARS + 64:,} more characters not kept]"
    return text[: MAX_TEXT_CHARS - 64] + marker


def reply_target(event: Event | None) -> str | None:
    """Whom the reply to ``event`` is for: its speaker when the event was private."""
    if event is None:
        return None
    return event.source_entity if event.private else None


def event_assessment(event: Event) -> dict[str, Any] | None:
    """The assessment a host gave with ``event`` (its event class), for the pattern."""
    # A host (or a classifier) may tell the engine what kind of event this is.
    event_class = event.meta.event_class
    if event_class is not None:
        return {"context_signals": {"event_class": event_class}}
    return None


def count_awake_tick(unit: Unit, clock: Clock) -> str | None:
    """Count an awake tick in ``unit`` and fall asleep when the schedule says so.

    Returns why the assistant fell asleep, or None. Only a sleep schedule uses the count
    (its ``min_awake_ticks``), so without one nothing is written.
    """
    if not unit.doc(SleepSchedule).enabled:
        return None
    state = unit.doc(OperatingMode)
    unit.put_doc(state.model_copy(update={"awake_ticks": state.awake_ticks + 1}))
    due, target, reason = check_sleep_schedule(unit, clock)
    if due and target == "sleep":
        transition_mode(unit, clock, "sleep", reason, scheduled=True)
        return reason
    return None
