"""Approvals through the facade: a decided call runs (or not) and the model is told."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ScriptedLLM
from mindspace.engine.approvals import request_approval
from mindspace.errors import InvalidInputError, RecordNotFoundError, ToolError
from mindspace.tools import Tool, ToolArgs, ToolCategory, ToolContext, default_registry


class _Args(ToolArgs):
    command: str


class DemolishTool(Tool[_Args]):
    """A DANGEROUS tool that records who approved each run."""

    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Args

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.ran: list[tuple[str, str | None]] = []

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        self.ran.append((args.command, ctx.approved_by))
        if self.fail:
            return {"success": False, "error": "the mill is made of stone"}
        return {"success": True, "output": f"{args.command} is rubble"}


def _setup(
    make_assistant: Callable[..., Assistant], llm: ScriptedLLM, tool: DemolishTool
) -> tuple[Assistant, str]:
    registry = default_registry()
    registry.register(tool)
    assistant = make_assistant(llm=llm, tools=registry)
    with assistant._core.transaction() as unit:
        asked = request_approval(unit, assistant.clock, "demolish", {"command": "old mill"})
    assert asked["status"] == "awaiting_approval"
    return assistant, asked["approval_id"]


def _prompt_text(llm: ScriptedLLM) -> str:
    return "\n".join(m.content or "" for m in llm.history[0].messages)


async def test_an_approved_call_runs_as_the_decider_and_the_model_hears_of_it(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    demolish = DemolishTool()
    assistant, approval_id = _setup(make_assistant, scripted, demolish)

    approval = await assistant.approve(approval_id, decided_by="Alice")

    assert demolish.ran == [("old mill", "Alice")]
    assert approval.status == "approved"
    assert approval.decided_by == "Alice"
    assert approval.result == {"success": True, "output": "old mill is rubble"}
    assert assistant.views.pending_approvals() == []
    [event] = assistant.views.open_events()
    assert event.type == "approval"
    assert event.source_entity == "Alice"

    scripted.enqueue("Good, the mill is gone.")
    result = await assistant.tick()
    assert result.kind == "event"
    assert result.event_id == event.id
    prompt = _prompt_text(scripted)
    assert f"Alice approved your request {approval_id} (demolish); it ran." in prompt
    assert "old mill is rubble" in prompt


async def test_a_rejected_call_never_runs_and_the_model_is_told_why(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    demolish = DemolishTool()
    assistant, approval_id = _setup(make_assistant, scripted, demolish)

    approval = await assistant.reject(approval_id, decided_by="Bob", reason="too risky")

    assert demolish.ran == []
    assert approval.status == "rejected"
    assert assistant.views.pending_approvals() == []
    scripted.enqueue("Understood, the mill stays.")
    await assistant.tick()
    prompt = _prompt_text(scripted)
    assert f"Bob rejected your request {approval_id} (demolish): too risky. It did not run." in (
        prompt
    )


async def test_a_failing_approved_call_is_recorded_as_failed_and_told_not_raised(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    demolish = DemolishTool(fail=True)
    assistant, approval_id = _setup(make_assistant, scripted, demolish)

    approval = await assistant.approve(approval_id, decided_by="Alice")

    assert approval.status == "failed"
    assert demolish.ran == [("old mill", "Alice")]
    [event] = assistant.views.open_events()
    assert "it failed: the mill is made of stone" in event.content


async def test_an_unknown_approval_id_names_the_pending_ones(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    demolish = DemolishTool()
    assistant, approval_id = _setup(make_assistant, scripted, demolish)

    with pytest.raises(RecordNotFoundError, match="apr_99") as caught:
        await assistant.approve("apr_99", decided_by="Alice")
    assert caught.value.extra["pending"] == [approval_id]
    assert caught.value.http_status == 404
    assert not isinstance(caught.value, ToolError)  # a host's mistake, not the model's

    await assistant.reject(approval_id, decided_by="Alice")
    with pytest.raises(RecordNotFoundError) as again:  # decided once, never twice
        await assistant.approve(approval_id, decided_by="Alice")
    assert again.value.extra["pending"] == []
    assert demolish.ran == []


@pytest.mark.parametrize("decider", ["", "   ", "x" * 129])
async def test_a_blank_or_overlong_decider_is_refused_and_nothing_runs(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, decider: str
) -> None:
    demolish = DemolishTool()
    assistant, approval_id = _setup(make_assistant, scripted, demolish)

    with pytest.raises(InvalidInputError, match="decided_by") as caught:
        await assistant.approve(approval_id, decided_by=decider)
    assert caught.value.http_status == 422
    assert not isinstance(caught.value, ToolError)
    with pytest.raises(InvalidInputError):
        await assistant.reject(approval_id, decided_by=decider)
    assert demolish.ran == []
    assert [a.id for a in assistant.views.pending_approvals()] == [approval_id]
    assert assistant.views.open_events() == []
