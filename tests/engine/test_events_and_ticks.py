"""The event queue and the awake tick."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.engine.records import ContextBuffer
from mindspace.errors import InvalidInputError
from mindspace.llm import Usage


async def test_urgent_and_high_priority_events_go_first(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    normal = assistant.enqueue_event("What's on the menu?", source_entity="Bob")
    urgent = assistant.enqueue_event(
        "Fire in the kitchen!", source_entity="Cook", metadata={"urgent": True}
    )
    high = assistant.enqueue_event(
        "The mayor is here", source_entity="Guard", metadata={"priority": 9}
    )
    direct = assistant.enqueue_event(
        "Psst", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    order = []
    for _ in range(4):
        scripted.enqueue("ok")
        order.append((await assistant.tick()).event_id)
    assert order == [high.id, urgent.id, direct.id, normal.id]
    assert (await assistant.tick()).kind == "idle"


async def test_ambient_messages_fill_a_bounded_context_buffer(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"context_buffer_size": 3})
    )
    for n in range(5):
        assistant.enqueue_event(
            f"chatter {n}", source_entity="Patron", metadata={"classification": "ambient"}
        )
    result = await assistant.tick()
    assert result.kind == "idle"
    assert result.ambient_buffered == 5
    buffered = [m.text for m in assistant._core.read().doc(ContextBuffer).messages]
    assert buffered == ["chatter 2", "chatter 3", "chatter 4"]

    scripted.enqueue("Hello!")
    assistant.enqueue_event("Hi barkeep", source_entity="Alice")
    await assistant.tick()
    # Ambient chatter changes every turn: it closes the prompt, after the cached prefix.
    system = scripted.history[0].messages[0].content or ""
    turn = scripted.history[0].messages[-1].content or ""
    assert "## Context Buffer" not in system
    assert "## Context Buffer" in turn
    assert "Patron: chatter 4" in turn
    assert "chatter 1" not in turn


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"content": ""}, "Event content is empty"),
        ({"content": "x" * 20_000}, "the limit is 16,000"),
        ({"content": "hi", "type": "Shout!"}, "Invalid event type 'Shout!'"),
        ({"content": "hi", "metadata": {"priority": 11}}, "whole number 0-10"),
        ({"content": "hi", "metadata": {"urgent": "yes"}}, "true or false"),
        ({"content": "hi", "source_entity": "  "}, "Invalid source_entity"),
    ],
)
def test_malformed_events_are_refused_and_nothing_is_queued(
    assistant: Assistant, kwargs: dict[str, Any], expected: str
) -> None:
    content = kwargs.pop("content")
    with pytest.raises(InvalidInputError, match=expected):
        assistant.enqueue_event(content, **kwargs)
    assert assistant.views.open_events() == []


async def test_autonomous_ticks_work_on_goals_and_are_rate_limited(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, clock: ManualClock
) -> None:
    assistant = make_assistant(llm=scripted)
    assert (await assistant.tick()).kind == "idle"  # no goals: nothing to do
    goal = (await assistant.call_tool("add_goal", {"description": "Restock the cellar"}))["goal_id"]
    scripted.enqueue(
        tool_calls=[{"name": "update_goal", "arguments": {"goal_id": goal, "progress": 30}}]
    )
    scripted.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])
    first = await assistant.tick()
    assert first.kind == "autonomous"
    assert first.tool_calls == [("update_goal", True), ("noop", True)]
    assert "Work toward your active goals" in scripted.history[0].last_user_text
    assert "Restock the cellar - 0% (active)" in (scripted.history[0].messages[0].content or "")
    clock.advance(seconds=30)
    assert (await assistant.tick()).kind == "idle"  # within the 60 s interval
    clock.advance(seconds=31)
    scripted.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])
    assert (await assistant.tick()).kind == "autonomous"


async def test_get_system_status_reports_the_real_loop_state(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Greet Alice"}}],
        usage=Usage(prompt_tokens=45_000, completion_tokens=20),
    )
    scripted.enqueue(
        tool_calls=[
            {"name": "get_system_status", "arguments": {}},
            {"name": "noop", "arguments": {}},
        ]
    )
    assistant.enqueue_event("Hello", source_entity="Alice")
    result = await assistant.tick()
    assert result.loop is not None
    status = result.loop.calls[1].result
    assert status["loop_state"] == {
        "iteration": 2,
        "max_iterations": 5,
        "tools_this_cycle": ["add_goal"],
        "tool_count_this_cycle": 1,
    }
    assert status["chain_state"] == {"in_chain": True, "chain_depth": 2, "pending_tools": ["noop"]}
    # The provider's usage replaced the estimate.
    assert status["token_usage"]["estimated_used"] == 45_000
    assert status["token_usage"]["source"] == "provider"
    assert status["token_usage"]["usage_percentage"] == 35.2
    assert status["session_metrics"]["total_tool_calls"] == 1  # calls before this one


async def test_without_provider_usage_the_prompt_is_estimated(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue("Hello!")
    assistant.enqueue_event("Hi there", source_entity="Alice")
    result = await assistant.tick()
    usage = assistant.views.status()["token_usage"]
    assert result.prompt is not None
    assert result.loop is not None
    # The offered tools' definitions go with the request, so they count too.
    assert result.loop.tool_tokens > 0
    assert usage["estimated_used"] == result.prompt.estimated_tokens + result.loop.tool_tokens
    assert usage["source"] == "estimate"


async def test_whispers_are_answered_privately_through_the_world(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    class Room:
        def __init__(self) -> None:
            self.said: list[tuple[str, str | None]] = []

        async def say(self, text: str, *, target: str | None = None) -> None:
            self.said.append((text, target))

        async def look(self) -> str:
            return "A warm tavern. Alice is here."

    room = Room()
    assistant = make_assistant(llm=scripted)
    assistant.attach_world(room)
    scripted.enqueue(tool_calls=[{"name": "look", "arguments": {}}])
    scripted.enqueue("The cellar key is under the mat.")
    assistant.enqueue_event("Where is the key?", type="whisper", source_entity="Alice")
    await assistant.tick()
    scripted.enqueue("Welcome, all!")
    assistant.enqueue_event("Hello everyone", type="say", source_entity="Bob")
    await assistant.tick()
    assert room.said == [("The cellar key is under the mat.", "Alice"), ("Welcome, all!", None)]
    assert "look" in scripted.history[0].tool_names
    look_result = next(m for m in scripted.history[1].messages if m.role == "tool")
    assert "A warm tavern" in (look_result.content or "")


async def test_a_failing_model_does_not_make_autonomous_ticks_spin(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, clock: ManualClock
) -> None:
    assistant = make_assistant(llm=scripted)
    await assistant.call_tool("add_goal", {"description": "Restock the cellar"})
    failed = await assistant.tick()  # nothing queued: the scripted model fails
    assert (failed.kind, failed.status) == ("autonomous", "failed")
    assert (await assistant.tick()).kind == "idle"
    clock.advance(seconds=61)
    scripted.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])
    assert (await assistant.tick()).status == "done"
