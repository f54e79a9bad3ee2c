"""How a tick ended for the speaker, and what it adds to the tool-use health window.

An event that speaks to the assistant (a whisper, a direct message, speech addressed to
it by name: classification ``direct_addressing``; an unclassified ``message``) expects
an answer. When the loop ends
without one - its iterations spent on failed calls, or a reply that was empty after
hygiene - the speaker gets the configured fallback reply, and the failure is recorded
in the event's ``error`` while the event is still ``done``: its writes are kept, and
running it again would repeat them. A deliberate silence (a terminal tool such as
``noop``, or a single-action pattern whose call was valid) is not a failure.
"""

from __future__ import annotations

from typing import Literal

from mindspace.engine.loop import LoopResult
from mindspace.engine.records import URGENT_CLASSIFICATIONS, Event
from mindspace.workspace.status import TickToolUse

__all__ = ["SPEECH_TOOLS", "ReplyOutcome", "is_addressed", "reply_outcome", "tick_tool_use"]

ReplyOutcome = Literal["replied", "fallback", "unanswered", "silent"]
"""How an event tick ended for the speaker: the model replied; it gave no reply to an
addressed event and the fallback reply was sent (or, with the fallback disabled, nothing:
``unanswered``); or it chose silence (an unaddressed event, or a deliberate terminal tool)."""

SPEECH_TOOLS = frozenset({"say", "emote"})
"""World tools through which the model answers in the host instead of with a reply."""


def is_addressed(event: Event) -> bool:
    """Whether ``event`` speaks to the assistant and so expects an answer.

    Whispers, direct messages and messages addressed to the assistant (the
    ``direct_addressing`` classification hosts give speech naming it) do, and so does an
    unclassified event of the default type ``message`` from someone: hosts that do not
    classify (the HTTP API, Python callers) send those to talk to the assistant.
    """
    if event.type == "whisper" or event.classification in URGENT_CLASSIFICATIONS:
        return True
    return event.classification is None and event.type == "message" and bool(event.source_entity)


def reply_outcome(
    event: Event | None, loop: LoopResult, fallback_reply: str
) -> tuple[ReplyOutcome | None, str | None, str | None]:
    """(outcome, the reply to deliver, the failure to record on the event).

    Args:
        event: The event the tick answered (None for autonomous and context ticks).
        loop: How the ReAct loop went.
        fallback_reply: The setting ``fallback_reply``; empty disables the fallback.
    """
    if event is None:
        return None, loop.reply, None
    if loop.reply or any(c.ok and c.name in SPEECH_TOOLS for c in loop.calls):
        return "replied", loop.reply, None
    deliberate = loop.stopped_by == "terminal_tool" or (
        loop.stopped_by == "single_action" and loop.valid_calls > 0
    )
    if deliberate or not is_addressed(event):
        return "silent", None, None
    why = (
        f"The model gave no reply after {loop.iterations} iteration(s) "
        f"(stopped by {loop.stopped_by}; {loop.valid_calls} valid and "
        f"{loop.invalid_calls + loop.repeated_calls} failed tool calls)"
    )
    fallback = fallback_reply.strip()
    if not fallback:
        return "unanswered", None, why + "; no fallback reply is set (MINDSPACE_FALLBACK_REPLY)"
    return "fallback", fallback, why + "; the fallback reply was sent"


def tick_tool_use(loop: LoopResult, outcome: ReplyOutcome | None) -> TickToolUse:
    """The tick's entry in the tool-use health window."""
    return TickToolUse(
        offered_tools=loop.offered_tools > 0,
        valid=loop.valid_calls,
        invalid=loop.invalid_calls,
        repeated=loop.repeated_calls,
        from_text=loop.calls_from_text,
        text_only=1 if loop.text_only and not loop.calls else 0,
        cut=loop.cut is not None,
        unanswered=outcome in ("fallback", "unanswered"),
    )
