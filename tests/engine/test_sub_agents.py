"""Sub-agents: delegate_subtask runs a bounded side session that never widens permissions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.engine.assistant import assistant_tools
from mindspace.tools import Tool, ToolArgs, ToolCategory, ToolContext


class _Args(ToolArgs):
    command: str


class DemolishTool(Tool[_Args]):
    """A DANGEROUS tool, as a host would provide (e.g. a builder command)."""

    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Args

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        self.ran.append(args.command)
        return {"success": True, "demolished": args.command}


def _delegate(task: str, tools: list[str], max_iterations: int | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"task": task, "tools": tools}
    if max_iterations is not None:
        arguments["max_iterations"] = max_iterations
    return {"name": "delegate_subtask", "arguments": arguments}


def _tool_results(scripted: ScriptedLLM, request: int) -> list[dict[str, Any]]:
    return [
        json.loads(m.content or "{}")
        for m in scripted.history[request].messages
        if m.role == "tool"
    ]


@pytest.fixture
def delegating(settings: Settings) -> Settings:
    return settings.model_copy(update={"sub_agents_enabled": True})


async def test_delegate_subtask_is_not_offered_unless_enabled(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[_delegate("Count the barrels", [])])
    scripted.enqueue("I will count them myself.")
    assistant.enqueue_event("How many barrels are left?", source_entity="Alice")
    result = await assistant.tick()
    assert "delegate_subtask" not in scripted.history[0].tool_names
    assert result.pattern is not None
    assert result.pattern.sub_agents_enabled is False
    assert result.pattern.source_layers["sub_agents_enabled"] == "static"
    [refusal] = _tool_results(scripted, 1)
    assert "not available in this context" in refusal["error"]
    assert len(scripted.history) == 2  # no side session ran


async def test_a_sub_agent_does_its_subtask_and_reports_back_as_a_tool_result(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, delegating: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=delegating)
    scripted.enqueue(
        tool_calls=[_delegate("Add a goal to restock the cellar", ["add_goal", "noop"], 2)]
    )
    scripted.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Restock the cellar"}}]
    )
    scripted.enqueue("Added the goal 'Restock the cellar'.")
    scripted.enqueue("The cellar will be restocked.")
    assistant.enqueue_event("We are out of ale!", source_entity="Alice")

    result = await assistant.tick()

    assert result.reply == "The cellar will be restocked."
    assert "delegate_subtask" in scripted.history[0].tool_names
    child = scripted.history[1]
    assert sorted(child.tool_names) == ["add_goal", "noop"]  # a subset of the parent's
    assert "sub-agent" in (child.messages[0].content or "")
    request = (child.messages[-1].content or "").split("## Pending Event\n")[-1]
    assert request == "Add a goal to restock the cellar"
    [report] = _tool_results(scripted, 3)
    assert report["success"] is True
    assert report["completed"] is True
    assert report["report"] == "Added the goal 'Restock the cellar'."
    assert report["tool_calls"] == [{"name": "add_goal", "ok": True, "status": "ran"}]
    assert report["max_iterations"] == 2
    # The sub-agent's writes commit with the tick.
    assert [g.description for g in assistant.views.goals().all()] == ["Restock the cellar"]

    assert result.loop is not None
    [side] = result.loop.side_sessions
    assert side.context_type == "sub_agent"
    assert side.pattern.max_iterations == 2
    assert side.pattern.dangerous_requires_confirm is True
    assert result.pattern is not None
    assert result.pattern.sub_agents_enabled is True
    assert result.pattern.source_layers["sub_agents_enabled"] == "allowed"


async def test_a_sub_agent_stops_at_its_own_iteration_limit(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, delegating: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=delegating)
    scripted.enqueue(tool_calls=[_delegate("Check the status", ["get_system_status"], 1)])
    scripted.enqueue(tool_calls=[{"name": "get_system_status", "arguments": {}}])
    scripted.enqueue("Checked.")
    assistant.enqueue_event("Are you well?", source_entity="Alice")
    await assistant.tick()
    assert len(scripted.history) == 3  # parent, one sub-agent round, parent again
    [report] = _tool_results(scripted, 2)
    assert (report["completed"], report["stopped_by"], report["iterations"]) == (
        False,
        "max_iterations",
        1,
    )


async def test_a_sub_agent_cannot_get_tools_its_parent_lacks(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, delegating: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=delegating)
    scripted.enqueue(tool_calls=[_delegate("Tear it down", ["add_goal", "demolish"])])
    scripted.enqueue("I cannot do that.")
    assistant.enqueue_event("Tear down the mill", source_entity="Alice")
    await assistant.tick()
    assert len(scripted.history) == 2  # no sub-agent ran
    [refusal] = _tool_results(scripted, 1)
    assert refusal["success"] is False
    assert "not offered to you: ['demolish']" in refusal["error"]


async def test_dangerous_calls_of_a_sub_agent_still_need_approval(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, delegating: Settings
) -> None:
    registry = assistant_tools()
    demolish = DemolishTool()
    registry.register(demolish)
    assistant = make_assistant(llm=scripted, settings=delegating, tools=registry)
    scripted.enqueue(tool_calls=[_delegate("Demolish the old mill", ["demolish"])])
    scripted.enqueue(tool_calls=[{"name": "demolish", "arguments": {"command": "old mill"}}])
    scripted.enqueue("Asked for approval to demolish the old mill.")
    scripted.enqueue("The mill will come down once approved.")
    assistant.enqueue_event("Get rid of the old mill", source_entity="Alice")

    result = await assistant.tick()

    # The parent's own pattern would run DANGEROUS tools at once; the sub-agent's never.
    assert result.pattern is not None
    assert result.pattern.dangerous_requires_confirm is False
    assert demolish.ran == []
    [report] = _tool_results(scripted, 3)
    assert report["tool_calls"] == [{"name": "demolish", "ok": True, "status": "awaiting_approval"}]
    [pending] = assistant.views.pending_approvals()
    assert report["awaiting_approval"] == [pending.id]
    await assistant.approve(pending.id, decided_by="admin")
    assert demolish.ran == ["old mill"]


@pytest.mark.parametrize("budget", [1, 2])
async def test_at_most_sub_agent_budget_sub_agents_run_at_once(
    make_assistant: Callable[..., Assistant],
    scripted: ScriptedLLM,
    delegating: Settings,
    budget: int,
) -> None:
    settings = delegating.model_copy(update={"sub_agent_budget": budget})
    assistant = make_assistant(llm=scripted, settings=settings)
    scripted.enqueue(tool_calls=[_delegate("Plan the week", ["delegate_subtask"])])
    scripted.enqueue(tool_calls=[_delegate("Plan Monday", [])])  # a sub-agent delegates
    if budget == 2:
        scripted.enqueue("Monday: market day.")
    scripted.enqueue("The week is planned.")
    scripted.enqueue("Done.")
    assistant.enqueue_event("Plan my week", source_entity="Alice")

    result = await assistant.tick()

    assert result.loop is not None
    [child] = result.loop.side_sessions
    [nested] = child.loop.calls
    assert nested.name == "delegate_subtask"
    if budget == 1:
        assert nested.ok is False
        assert "the budget is 1 at once" in nested.result["error"]
        assert child.loop.side_sessions == []
    else:
        assert nested.ok is True
        assert nested.result["report"] == "Monday: market day."
        [grandchild] = child.loop.side_sessions
        assert grandchild.context_type == "sub_agent"
        assert grandchild.loop.offered_names == ()


async def test_contexts_that_disallow_sub_agents_never_offer_delegation(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, delegating: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=delegating)
    scripted.enqueue("Nothing to do.")
    result = await assistant.run_context("tick_autonomous", task="Work on your goals.")
    assert "delegate_subtask" not in scripted.history[0].tool_names
    assert result.pattern is not None
    assert result.pattern.source_layers["sub_agents_enabled"] == "context"
