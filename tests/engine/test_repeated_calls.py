"""Identical tool calls repeated within one tick run once (spec 000 loop_state)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mindspace import Assistant, ScriptedLLM
from mindspace.workspace.records import Goal


def _goal(description: str = "Restock the cellar", **extra: Any) -> dict[str, Any]:
    return {"name": "add_goal", "arguments": {"description": description, **extra}}


async def test_ten_identical_add_goal_calls_in_one_tick_leave_one_goal(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    for batch in (3, 3, 2, 2):  # ten calls over four iterations
        scripted.enqueue(tool_calls=[_goal() for _ in range(batch)])
    scripted.enqueue("It's on my list.")
    assistant.enqueue_event("Restock the cellar please", source_entity="Alice")
    result = await assistant.tick()

    goals = assistant._core.read().all(Goal)
    assert [g.description for g in goals] == ["Restock the cellar"]
    assert result.reply == "It's on my list."
    assert result.loop is not None
    assert result.loop.repeated_calls == 9
    statuses = [c.status for c in result.loop.calls]
    assert statuses == ["ran"] + ["repeated"] * 9
    # The model is told it already did that, with the earlier result's key fields.
    repeat = result.loop.calls[1].result
    assert repeat["success"] is False
    assert "already called 'add_goal'" in repeat["error"]
    assert repeat["earlier_result"]["goal_id"] == goals[0].id
    assert repeat["suggestion"]
    # Only the call that ran counts as a tool call in the session metrics.
    assert assistant.views.status()["session_metrics"]["total_tool_calls"] == 1


async def test_the_same_arguments_in_another_order_are_the_same_call(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    first = json.dumps({"description": "Fix the gate", "priority": "high"})
    second = json.dumps({"priority": "high", "description": "Fix the gate"})
    scripted.enqueue(
        tool_calls=[
            {"name": "add_goal", "arguments": first},
            {"name": "add_goal", "arguments": second},
        ]
    )
    scripted.enqueue("Noted.")
    assistant.enqueue_event("Fix the gate, it's urgent", source_entity="Alice")
    await assistant.tick()
    assert len(assistant._core.read().all(Goal)) == 1


async def test_different_arguments_and_a_new_tick_run_again(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[_goal("Fix the gate"), _goal("Sweep the floor")])
    scripted.enqueue("Noted both.")
    assistant.enqueue_event("Two chores", source_entity="Alice")
    await assistant.tick()
    # The same call in a later tick is a new decision, not a repeat.
    scripted.enqueue(tool_calls=[_goal("Fix the gate")])
    scripted.enqueue("Noted again.")
    assistant.enqueue_event("The gate again", source_entity="Alice")
    result = await assistant.tick()
    assert result.loop is not None
    assert result.loop.repeated_calls == 0
    assert len(assistant._core.read().all(Goal)) == 3
