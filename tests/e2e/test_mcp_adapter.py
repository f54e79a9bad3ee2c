"""The MCP adapter in process, through the SDK's client: the cases a subprocess need not show.

A tool that crashes, a DANGEROUS tool under the stdio host's hint, every resource, and
an unknown resource URI. The assistant, its store and the engine are real.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mindspace.engine.assistant import Assistant, assistant_tools
from mindspace.hosts.mcp import RESOURCES, build_server, resource_uri
from mindspace.tools.base import NoArgs, Tool, ToolArgs, ToolCategory, ToolContext


class _Target(ToolArgs):
    target: str


class Demolish(Tool[_Target]):
    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Target

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, ctx: ToolContext, args: _Target) -> dict[str, Any]:
        self.ran.append(args.target)
        return {"success": True}


class Crash(Tool[NoArgs]):
    name = "crash"
    description = "Always fails with a bug."
    category = ToolCategory.SAFE_CHAIN
    args_model = NoArgs

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        ctx.goals.add("written before the crash")
        raise RuntimeError("boom")


@pytest.fixture
def demolish() -> Demolish:
    return Demolish()


@pytest.fixture
def served(make_assistant: Callable[..., Assistant], demolish: Demolish) -> Assistant:
    registry = assistant_tools()
    registry.register(demolish)
    registry.register(Crash())
    return make_assistant(tools=registry)


def _client(assistant: Assistant) -> Client:
    def assistant_for(ctx: ServerRequestContext[Any, Any]) -> Assistant:
        return assistant

    return Client(build_server(assistant_for))


async def test_a_crashing_tool_is_an_error_result_and_stores_nothing(served: Assistant) -> None:
    async with _client(served) as client:
        crashed = await client.call_tool("crash", {})
    assert crashed.is_error is True
    assert crashed.structured_content["success"] is False
    assert "internal error" in crashed.structured_content["error"]
    assert crashed.structured_content["suggestion"]
    assert served.views.goals().all() == []


async def test_a_dangerous_call_waits_and_says_how_to_approve(
    served: Assistant, demolish: Demolish
) -> None:
    async with _client(served) as client:
        asked = await client.call_tool("demolish", {"target": "the mill"})
        unknown = await client.call_tool("demolsh", {"target": "the mill"})
    result = asked.structured_content
    assert result["status"] == "awaiting_approval"
    assert "an MCP client" in result["message"]
    assert "dashboard" in result["how_to_approve"]
    assert demolish.ran == []
    pending = served.views.pending_approvals()
    assert [(a.id, a.tool, json.loads(a.arguments)) for a in pending] == [
        (result["approval_id"], "demolish", {"target": "the mill"})
    ]
    # a misspelt name is an ordinary unknown-tool error, with the closest names
    assert unknown.is_error is True
    assert "demolish" in unknown.structured_content["suggestion"]

    decided = await served.approve(result["approval_id"], "Mira")
    assert decided.status == "approved"
    assert demolish.ran == ["the mill"]


async def test_every_resource_reads_as_json_and_an_unknown_one_is_refused(
    served: Assistant,
) -> None:
    await served.call_tool("store_memory", {"content": "The mill was built in 1820."})
    await served.call_tool("add_journal_entry", {"content": "Walked by the mill today."})
    async with _client(served) as client:
        bodies = {}
        for name in RESOURCES:
            read = await client.read_resource(resource_uri("barkeep", name))
            assert read.contents[0].mime_type == "application/json"
            bodies[name] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        with pytest.raises(MCPError, match=r"Unknown resource 'mindspace://barkeep/diary'"):
            await client.read_resource("mindspace://barkeep/diary")
    assert bodies["goals"]["total"] == 0
    assert "key_facts" in bodies["session-memory"]
    assert [e["content"] for e in bodies["journal"]["entries"]] == ["Walked by the mill today."]
    assert [m["content"] for m in bodies["memories"]["memories"]] == ["The mill was built in 1820."]
