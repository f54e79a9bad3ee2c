"""decompose_goal asks its question in the goal_decompose context (spec 002 §1, §4)."""

from __future__ import annotations

import json
from collections.abc import Callable

from mindspace import Assistant, ScriptedLLM
from mindspace.hosts.http.ticks import tick_record

SUBTASKS = ["Bake the bread", "Roast the boar", "Set the long tables"]


async def _goal(assistant: Assistant) -> str:
    added = await assistant.call_tool("add_goal", {"description": "Hold the midwinter feast"})
    return str(added["goal_id"])


async def test_decompose_goal_runs_in_the_goal_decompose_context(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    goal_id = await _goal(assistant)
    scripted.enqueue(tool_calls=[{"name": "decompose_goal", "arguments": {"goal_id": goal_id}}])
    scripted.enqueue(json.dumps(SUBTASKS))
    scripted.enqueue("The feast is planned.")
    assistant.enqueue_event("Plan the feast, please", source_entity="Alice")

    result = await assistant.tick()

    assert result.reply == "The feast is planned."
    assert result.tool_calls == [("decompose_goal", True)]
    tree = assistant.views.goal_tree()["goals"][0]
    assert [s["description"] for s in tree["subtasks"]] == SUBTASKS

    # The question went out with the context's components, no tools, one iteration.
    asked = scripted.history[1]
    assert asked.tools == ()
    system = asked.messages[0].content or ""
    assert "break one goal into subtasks" in system
    assert "long-lived assistant" not in system  # the context's own system prompt
    assert goal_id in "\n".join(m.content or "" for m in asked.messages)  # goals component
    request = (asked.messages[-1].content or "").split("## Pending Event\n")[-1]
    assert request.startswith("Break down this goal into 3-7")
    assert "Plan the feast, please" not in "\n".join(m.content or "" for m in asked.messages)

    assert result.loop is not None
    [side] = result.loop.side_sessions
    assert side.context_type == "goal_decompose"
    assert (side.pattern.mode, side.pattern.max_iterations) == ("single_action", 1)
    assert side.pattern.source_layers["mode"] == "context"
    assert [c.key for c in side.prompt.components] == ["system_prompt", "goals", "pending_event"]
    assert side.loop.offered_names == ()

    # The context-window viewer shows the side session with its prompt and pattern.
    record = tick_record(1, "now", result)
    [shown] = record["loop"]["side_sessions"]
    assert shown["context_type"] == "goal_decompose"
    assert shown["pattern"]["max_iterations"] == 1
    assert [c["key"] for c in shown["prompt"]["components"]] == [
        "system_prompt",
        "goals",
        "pending_event",
    ]


async def test_an_unusable_answer_gets_one_repair_in_the_same_conversation(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    goal_id = await _goal(assistant)
    scripted.enqueue("Bread, boar and tables, I would say.")
    scripted.enqueue(json.dumps(SUBTASKS))

    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})

    assert result["success"] is True
    assert result["structured"] == "repaired"
    assert result["subtasks_created"] == 3
    first, repair = scripted.history
    assert "break one goal into subtasks" in (first.messages[0].content or "")
    # The repair continues the goal_decompose conversation: its messages, the refused
    # answer, then the request to correct it.
    assert repair.messages[: len(first.messages)] == first.messages
    assert repair.messages[-2].content == "Bread, boar and tables, I would say."
    assert "could not be used" in (repair.messages[-1].content or "")


async def test_the_offline_model_still_decomposes_through_the_context(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant()  # the offline model
    goal_id = await _goal(assistant)
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is True
    assert 3 <= result["subtasks_created"] <= 7
