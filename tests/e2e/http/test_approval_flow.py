"""Approvals end to end through the HTTP API: the model asks, a person decides, the model
hears of it on its next tick.

The store, the engine, the app and the tool loop are real; the model is a function that
calls a DANGEROUS host tool when asked to tear something down, and the tool records
whether it ran.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import pytest

from mindspace.hosts.http import AssistantHub, create_app
from mindspace.llm import FunctionLLM
from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.tools import default_registry
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext

A = "/v1/assistants/barkeep"
BUILDING = {"event_class": "building"}  # the execution pattern asks to confirm DANGEROUS calls


class _Args(ToolArgs):
    target: str


class DemolishTool(Tool[_Args]):
    """A DANGEROUS tool, as a host would provide (a builder command)."""

    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Args

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        self.ran.append(args.target)
        return {"success": True, "demolished": args.target}


def _model(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse | str:
    """Asked to tear down X, call demolish(X) once; otherwise answer in words."""
    if messages[-1].role == "tool":
        return "I have asked for approval."
    text = "\n".join(m.content or "" for m in messages if m.role == "user")
    if "your request" in text:  # an approval decision: acknowledge, never ask again
        return "Understood."
    for target in ("the old mill", "the inn"):
        if f"Tear down {target}" in text:
            arguments = json.dumps({"target": target})
            return LLMResponse(
                tool_calls=(ToolCall(id="call_1", name="demolish", arguments=arguments),),
                model="function",
            )
    return "Noted."


@pytest.fixture
def demolish() -> DemolishTool:
    return DemolishTool()


@pytest.fixture
def llm() -> FunctionLLM:
    return FunctionLLM(_model)


@pytest.fixture
async def api(
    make_hub: Callable[..., AssistantHub],
    server_settings: Callable[..., Any],
    demolish: DemolishTool,
    llm: FunctionLLM,
) -> AsyncIterator[httpx.AsyncClient]:
    registry = default_registry()
    registry.register(demolish)
    hub = make_hub(llm=llm, tools=registry)
    app = create_app(hub, server=server_settings(), background_ticks=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        created = await client.post("/v1/assistants", json={"key": "barkeep"})
        assert created.status_code == 201
        yield client


async def _ask_to_tear_down(client: httpx.AsyncClient, target: str) -> dict[str, Any]:
    """Send the request, tick, and return the pending approval it produced."""
    sent = await client.post(
        f"{A}/events",
        json={"content": f"Tear down {target}", "source_entity": "Alice", "metadata": BUILDING},
    )
    assert sent.status_code == 202
    ticked = (await client.post(f"{A}/tick")).json()
    assert ticked["status"] == "done"
    assert ticked["reply"] == "I have asked for approval."
    call = ticked["tick"]["loop"]["calls"][0]
    assert (call["name"], call["status"]) == ("demolish", "awaiting_approval")
    pending = (await client.get(f"{A}/approvals")).json()["approvals"]
    assert [(a["tool"], a["status"]) for a in pending] == [("demolish", "pending")]
    assert json.loads(pending[0]["arguments"]) == {"target": target}
    approval: dict[str, Any] = pending[0]
    return approval


async def _next_prompt(client: httpx.AsyncClient, llm: FunctionLLM) -> str:
    """Tick once more; return everything the model was sent in that tick."""
    before = len(llm.history)
    ticked = (await client.post(f"{A}/tick")).json()
    assert ticked["kind"] == "event"
    assert ticked["status"] == "done"
    assert len(llm.history) > before  # the model was asked
    return "\n".join(m.content or "" for call in llm.history[before:] for m in call.messages)


async def test_an_approved_call_runs_and_the_model_is_told(
    api: httpx.AsyncClient, demolish: DemolishTool, llm: FunctionLLM
) -> None:
    approval = await _ask_to_tear_down(api, "the old mill")
    assert demolish.ran == []  # waiting: nothing ran yet

    approved = await api.post(
        f"{A}/approvals/{approval['id']}/approve", json={"decided_by": "Alice"}
    )
    assert approved.status_code == 200
    assert approved.json() == {
        "success": True,
        "approval_id": approval["id"],
        "result": {"success": True, "demolished": "the old mill"},
    }
    assert demolish.ran == ["the old mill"]
    assert (await api.get(f"{A}/approvals")).json()["approvals"] == []
    queued = (await api.get(f"{A}/events")).json()["events"]
    assert [(e["type"], e["source_entity"]) for e in queued] == [("approval", "Alice")]

    prompt = await _next_prompt(api, llm)
    assert f"Alice approved your request {approval['id']} (demolish); it ran." in prompt
    assert demolish.ran == ["the old mill"]  # told, not run again
    again = await api.post(f"{A}/approvals/{approval['id']}/approve", json={"decided_by": "Bo"})
    assert again.status_code == 404  # decided once
    assert again.json()["pending"] == []


async def test_a_rejected_call_never_runs_and_the_model_is_told(
    api: httpx.AsyncClient, demolish: DemolishTool, llm: FunctionLLM
) -> None:
    approval = await _ask_to_tear_down(api, "the inn")

    rejected = await api.post(
        f"{A}/approvals/{approval['id']}/reject",
        json={"decided_by": "Alice", "reason": "The inn stays"},
    )
    assert rejected.status_code == 200
    assert rejected.json() == {
        "success": True,
        "approval_id": approval["id"],
        "status": "rejected",
    }
    assert (await api.get(f"{A}/approvals")).json()["approvals"] == []

    prompt = await _next_prompt(api, llm)
    told = (
        f"Alice rejected your request {approval['id']} (demolish): The inn stays. It did not run."
    )
    assert told in prompt
    assert demolish.ran == []


async def test_a_decision_needs_a_decider_and_a_pending_id(
    api: httpx.AsyncClient, demolish: DemolishTool
) -> None:
    approval = await _ask_to_tear_down(api, "the old mill")
    blank = await api.post(f"{A}/approvals/{approval['id']}/approve", json={"decided_by": "  "})
    assert blank.status_code == 422
    assert blank.json()["success"] is False
    assert blank.json()["suggestion"]
    missing = await api.post(f"{A}/approvals/apr_99/reject", json={"decided_by": "Alice"})
    assert missing.status_code == 404
    assert "apr_99" in missing.json()["error"]
    assert missing.json()["suggestion"]
    assert missing.json()["pending"] == [approval["id"]]  # where the valid ids are
    assert demolish.ran == []
