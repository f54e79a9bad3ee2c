"""The MCP streamable-HTTP transport of ``mindspace serve``, driven by the SDK's own client.

A real uvicorn server on loopback serves the app with the API's tokens: one for every
assistant, one for 'alice' only. The client lists tools, calls ``add_goal``, reads the
goal tree and sees a tool error in the spec's shape; a wrong token and a token for
another assistant are refused before the MCP server sees the request. A DANGEROUS host
tool never runs from MCP: the call waits for an approval, as everywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mindspace.hosts.http import AssistantHub, create_app
from mindspace.hosts.mcp import CATEGORY_META_KEY
from mindspace.tools import default_registry
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext


class _Args(ToolArgs):
    target: str


class DemolishTool(Tool[_Args]):
    """A DANGEROUS tool, as a host would provide; it records whether it ran."""

    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Args

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        self.ran.append(args.target)
        return {"success": True, "demolished": args.target}


@pytest.fixture
def demolish() -> DemolishTool:
    return DemolishTool()


@pytest.fixture
def served(
    make_hub: Callable[..., AssistantHub],
    server_settings: Callable[..., Any],
    live_server: Callable[..., Any],
    tokens: Any,
    demolish: DemolishTool,
) -> tuple[str, AssistantHub]:
    """The base URL of a live server with 'alice' and 'bob', and its hub."""
    registry = default_registry()
    registry.register(demolish)
    hub = make_hub(tools=registry)
    hub.create("alice")
    hub.create("bob")
    server = server_settings(api_token=tokens.all, api_tokens=f"{tokens.alice}=alice")
    app = create_app(hub, server=server, background_ticks=False)
    return live_server(app).url, hub


def _client(url: str, token: str | None) -> tuple[httpx2.AsyncClient, Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60)


async def test_a_client_with_a_token_uses_its_assistant(
    served: tuple[str, AssistantHub], tokens: Any
) -> None:
    base, hub = served
    http, client = _client(f"{base}/v1/assistants/alice/mcp", tokens.alice)
    async with http, client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "add_goal" in tools
        assert "demolish" in tools
        assert tools["demolish"].meta == {CATEGORY_META_KEY: "DANGEROUS"}
        assert tools["demolish"].annotations is not None
        assert tools["demolish"].annotations.destructive_hint is True
        assert tools["demolish"].input_schema["required"] == ["target"]

        added = await client.call_tool("add_goal", {"description": "Restock the cellar"})
        assert added.is_error is False
        goal_id = added.structured_content["goal_id"]

        read = await client.read_resource("mindspace://alice/goals")
        tree = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert [g["id"] for g in tree["goals"]] == [goal_id]

        failed = await client.call_tool("no_such_tool", {})
        assert failed.is_error is True
        assert failed.structured_content["success"] is False
        assert "no_such_tool" in failed.structured_content["error"]
        assert failed.structured_content["suggestion"]

        # another assistant's resource is not this endpoint's
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("mindspace://bob/goals")

    # the goal is alice's, in the store every host shares; bob has none
    assert [g.id for g in hub.get("alice").views.goals().all()] == [goal_id]
    assert hub.get("bob").views.goals().all() == []


async def test_a_dangerous_tool_waits_for_approval(
    served: tuple[str, AssistantHub], tokens: Any, demolish: DemolishTool
) -> None:
    base, hub = served
    http, client = _client(f"{base}/v1/assistants/alice/mcp", tokens.all)
    async with http, client:
        asked = await client.call_tool("demolish", {"target": "the old mill"})
        result = asked.structured_content
        assert asked.is_error is False
        assert result["status"] == "awaiting_approval"
        approval_id = result["approval_id"]
        assert f"/v1/assistants/alice/approvals/{approval_id}/approve" in result["how_to_approve"]
        assert demolish.ran == []  # it did not run

        # invalid arguments are refused at once; no approval is recorded for them
        invalid = await client.call_tool("demolish", {})
        assert invalid.is_error is True
        assert "target" in invalid.structured_content["error"]

    alice = hub.get("alice")
    assert [(a.id, a.tool) for a in alice.views.pending_approvals()] == [(approval_id, "demolish")]
    async with httpx2.AsyncClient(base_url=base, timeout=60) as http:
        approved = await http.post(
            f"/v1/assistants/alice/approvals/{approval_id}/approve",
            json={"decided_by": "Mira"},
            headers={"Authorization": f"Bearer {tokens.all}"},
        )
    assert approved.status_code == 200, approved.text
    assert demolish.ran == ["the old mill"]


@pytest.mark.parametrize(
    ("assistant", "token", "status", "error"),
    [
        ("alice", "not-a-known-token-0123456789", 401, "The bearer token is not valid"),
        ("alice", None, 401, "This API needs a bearer token"),
        ("bob", "alice", 403, "This token may not use assistant 'bob'"),
        ("nobody", "all", 404, "No assistant 'nobody'"),
    ],
)
async def test_an_unauthorised_token_is_refused(
    served: tuple[str, AssistantHub],
    tokens: Any,
    assistant: str,
    token: str | None,
    status: int,
    error: str,
) -> None:
    base, _ = served
    url = f"{base}/v1/assistants/{assistant}/mcp"
    secret = getattr(tokens, token) if token in ("all", "alice") else token
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient(timeout=60) as http:
        refused = await http.post(url, json=ping, headers=headers)
    assert refused.status_code == status
    body = refused.json()
    assert body["success"] is False
    assert body["error"].startswith(error)
    assert body["suggestion"]

    # the SDK's client fails to connect rather than reaching the assistant
    http, client = _client(url, secret)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the SDK nests it in groups
        async with http, client:
            await client.list_tools()
    assert any(isinstance(e, MCPError) for e in _leaves(raised.value)), repr(raised.value)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_an_open_server_serves_loopback_names_only(
    make_hub: Callable[..., AssistantHub],
    server_settings: Callable[..., Any],
    live_server: Callable[..., Any],
) -> None:
    hub = make_hub()
    hub.create("alice")
    base = live_server(create_app(hub, server=server_settings(), background_ticks=False)).url
    url = f"{base}/v1/assistants/alice/mcp"
    http, client = _client(url, None)
    async with http, client:  # no token needed when none is configured
        assert (await client.list_tools()).tools
    # a page on another name (DNS rebinding) does not reach the assistant
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient(timeout=60) as raw:
        rebound = await raw.post(url, json=ping, headers={"Host": "evil.example"})
    assert rebound.status_code in (400, 403, 421)
    assert "tools" not in rebound.text
