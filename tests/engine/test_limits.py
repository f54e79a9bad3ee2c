"""The execution limits, each shown through a real tick or context run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.tools import Tool, ToolArgs, ToolCategory, ToolContext, default_registry


def _goal_call(n: int) -> dict[str, Any]:
    return {"name": "add_goal", "arguments": {"description": f"Step {n}"}}


async def test_reflection_stops_at_three_iterations(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    for _ in range(6):
        scripted.enqueue(tool_calls=[{"name": "get_system_status", "arguments": {}}])
    result = await assistant.run_context("reflection", task="Reflect on the day.")
    assert result.pattern is not None
    assert result.pattern.max_iterations == 3
    assert result.pattern.source_layers["max_iterations"] == "context"
    assert len(scripted.history) == 3
    assert result.loop is not None
    assert result.loop.stopped_by == "max_iterations"
    system = scripted.history[0].messages[0].content or ""
    assert "periodic self-reflection" in system


async def test_goal_decompose_is_a_single_action_with_no_tools(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[_goal_call(1)])
    scripted.enqueue("never asked")
    result = await assistant.run_context("goal_decompose", task="Break down: Build a tavern")
    assert result.pattern is not None
    assert result.pattern.mode == "single_action"
    assert result.pattern.max_iterations == 1
    assert len(scripted.history) == 1
    assert scripted.history[0].tools == ()
    assert result.tool_calls == [("add_goal", False)]  # not offered, so refused
    assert assistant.views.goals().all() == []


async def test_high_token_pressure_caps_iterations_at_two(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"model_limit": 10_000})
    )
    await assistant.record_context_usage(6_500)  # 65%: "high"
    for n in range(5):
        scripted.enqueue(tool_calls=[_goal_call(n)])
    assistant.enqueue_event("Plan the feast", source_entity="Alice")
    result = await assistant.tick()
    assert result.pattern is not None
    assert result.pattern.max_iterations == 2
    assert result.pattern.source_layers["max_iterations"] == "signal:token_pressure"
    assert len(scripted.history) == 2


async def test_critical_token_pressure_forces_a_single_action(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"model_limit": 10_000})
    )
    await assistant.record_context_usage(8_500)
    scripted.enqueue(tool_calls=[_goal_call(1)])
    assistant.enqueue_event("Plan the feast", source_entity="Alice")
    result = await assistant.tick()
    assert result.pattern is not None
    assert result.pattern.mode == "single_action"
    assert result.pattern.source_layers["mode"] == "signal:token_pressure"
    assert len(scripted.history) == 1


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


async def test_three_recent_errors_force_single_action_and_confirmation(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    registry = default_registry()
    demolish = DemolishTool()
    registry.register(demolish)
    assistant = make_assistant(llm=scripted, tools=registry)

    # Three malformed calls in a row: bad JSON, an unknown tool, invalid arguments.
    scripted.enqueue(
        tool_calls=[
            {"name": "add_goal", "arguments": "{not json"},
            {"name": "add_gaol", "arguments": {}},
            {"name": "update_goal", "arguments": {"goal_id": 5}},
        ]
    )
    scripted.enqueue("Sorry, something went wrong.")
    assistant.enqueue_event("Do things", source_entity="Alice")
    first = await assistant.tick()
    assert first.tool_calls == [("add_goal", False), ("add_gaol", False), ("update_goal", False)]
    errors = [m.content for m in scripted.history[1].messages if m.role == "tool"]
    assert "not valid JSON" in (errors[0] or "")
    assert "Unknown tool 'add_gaol'" in (errors[1] or "")
    assert "Invalid arguments" in (errors[2] or "")
    assert assistant.views.status()["session_metrics"]["failed_calls"] == 3

    scripted.enqueue(tool_calls=[{"name": "demolish", "arguments": {"command": "old mill"}}])
    assistant.enqueue_event("Tear down the old mill", source_entity="Alice")
    second = await assistant.tick()
    assert second.pattern is not None
    assert second.pattern.mode == "single_action"
    assert second.pattern.dangerous_requires_confirm is True
    assert second.pattern.source_layers["dangerous_requires_confirm"] == "signal:recent_errors"
    assert len(scripted.history) == 3  # one call only
    assert demolish.ran == []  # not run: it awaits approval
    assert second.loop is not None
    assert second.loop.calls[0].status == "awaiting_approval"
    assert second.loop.calls[0].result["status"] == "awaiting_approval"

    pending = assistant.views.pending_approvals()
    assert [(a.tool, a.status) for a in pending] == [("demolish", "pending")]
    approval = await assistant.approve(pending[0].id, decided_by="admin")
    assert approval.status == "approved"
    assert approval.result == {"success": True, "demolished": "old mill"}
    assert demolish.ran == ["old mill"]
    assert assistant.views.pending_approvals() == []


async def test_a_rejected_approval_never_runs(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    registry = default_registry()
    demolish = DemolishTool()
    registry.register(demolish)
    assistant = make_assistant(llm=scripted, tools=registry)
    scripted.enqueue(tool_calls=[{"name": "demolish", "arguments": {"command": "the inn"}}])
    scripted.enqueue("Asked for approval.")
    assistant.enqueue_event(
        "Tear down the inn", source_entity="Alice", metadata={"event_class": "building"}
    )
    result = await assistant.tick()
    assert result.pattern is not None
    assert result.pattern.source_layers["dangerous_requires_confirm"] == "signal:event_class"
    approval = assistant.views.pending_approvals()[0]
    await assistant.reject(approval.id, decided_by="admin", reason="The inn stays")
    assert assistant.views.pending_approvals() == []
    assert demolish.ran == []


async def test_a_filtered_tool_is_refused_if_the_model_calls_it_anyway(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[_goal_call(1)])
    scripted.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])
    result = await assistant.run_context("reflection", task="Reflect.")
    offered = scripted.history[0].tool_names
    assert "add_goal" not in offered
    assert set(offered) <= {"noop", "add_journal_entry", "review_journal"}
    assert result.tool_calls == [("add_goal", False), ("noop", True)]
    refusal = next(m for m in scripted.history[1].messages if m.role == "tool")
    assert "not available in this context" in (refusal.content or "")
    assert assistant.views.goals().all() == []
    assert result.loop is not None
    assert result.loop.stopped_by == "terminal_tool"


async def test_max_iterations_is_a_hard_stop_for_events(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    for n in range(9):
        scripted.enqueue(tool_calls=[_goal_call(n)])
    assistant.enqueue_event("Keep going", source_entity="Alice")
    result = await assistant.tick()
    assert len(scripted.history) == 5
    assert result.loop is not None
    assert result.loop.stopped_by == "max_iterations"
    assert len(assistant.views.goals().all()) == 5
