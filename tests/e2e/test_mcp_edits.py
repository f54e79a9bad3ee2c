"""MCP parity with Mem0's server: edit and delete a memory, forget an entity, through the
SDK's client; each waits for an operator's approval, then is applied and in the history.
Entities and history are resources. The assistant, its store and the engine are real.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp import Client
from mcp.server import ServerRequestContext

from mindspace.engine.assistant import Assistant
from mindspace.hosts.mcp import CATEGORY_META_KEY, build_server, resource_uri


def _client(assistant: Assistant) -> Client:
    def assistant_for(ctx: ServerRequestContext[Any, Any]) -> Assistant:
        return assistant

    return Client(build_server(assistant_for, requested_by="claude-desktop"))


async def _memories(assistant: Assistant) -> dict[str, str]:
    page = assistant.views.memory_page(limit=50)
    return {m["id"]: m["content"] for m in page["memories"]}


async def test_edits_wait_for_approval_then_apply_and_are_in_the_history(
    make_assistant: Callable[..., Assistant],
) -> None:
    a = make_assistant()
    ale = (await a.call_tool("store_memory", {"content": "Alice likes dark ale"}))["memory_id"]
    mill = (await a.call_tool("store_memory", {"content": "The mill was built in 1820"}))[
        "memory_id"
    ]
    await a.call_tool(
        "store_memory", {"content": "Eve's vault code is 4711", "source_entity": "Eve"}
    )
    await a.call_tool("update_entity_observation", {"entity_id": "Eve", "observation": "Eve came"})

    async with _client(a) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("edit_memory", "delete_memory", "forget_entity"):
            assert tools[name].meta == {CATEGORY_META_KEY: "DANGEROUS"}
            assert tools[name].annotations is not None
            assert tools[name].annotations.destructive_hint is True
            assert "approval" in (tools[name].description or "")
        assert tools["edit_memory"].input_schema["required"] == ["memory_id"]

        asked = [
            await client.call_tool(
                "edit_memory", {"memory_id": ale, "content": "Alice likes stout"}
            ),
            await client.call_tool("delete_memory", {"memory_id": mill}),
            await client.call_tool("forget_entity", {"entity_id": "Eve"}),
        ]
        bad = await client.call_tool("edit_memory", {"memory_id": ale, "importance": 99})

    for call in asked:
        assert call.is_error is False
        assert call.structured_content["status"] == "awaiting_approval"
        assert "dashboard" in call.structured_content["how_to_approve"]
    assert bad.is_error is True
    assert "importance" in bad.structured_content["error"]

    # Pending: nothing changed yet.
    before = await _memories(a)
    assert before[ale] == "Alice likes dark ale"
    assert before[mill] == "The mill was built in 1820"
    assert "Eve's vault code is 4711" in before.values()
    assert a.views.entity("Eve") is not None
    pending = a.views.pending_approvals()
    assert [p.tool for p in pending] == ["edit_memory", "delete_memory", "forget_entity"]

    for approval in pending:
        decided = await a.approve(approval.id, "Mira")
        assert decided.status == "approved", decided.result
    memories = await _memories(a)
    assert memories == {ale: "Alice likes stout"}
    assert a.views.entity("Eve") is None
    assert a.views.pending_approvals() == []

    history = [e for e in a.views.history(limit=20).entries if e.via is None]
    assert [(e.action, e.target_kind, e.actor) for e in history] == [
        ("forget", "entity", "Mira"),
        ("delete", "memory", "Mira"),
        ("update", "memory", "Mira"),
    ]
    # The model asked for none of these: no approval event is queued for it.
    assert [e for e in a._core.queue.open(10) if e.type == "approval"] == []

    # Approving an edit whose memory is gone fails cleanly and changes nothing.
    async with _client(a) as client:
        again = await client.call_tool("delete_memory", {"memory_id": mill})
    failed = await a.approve(again.structured_content["approval_id"], "Mira")
    assert failed.status == "failed"
    assert failed.result is not None
    assert mill in failed.result["error"]
    assert await _memories(a) == {ale: "Alice likes stout"}


async def test_a_rejected_edit_never_runs(make_assistant: Callable[..., Assistant]) -> None:
    a = make_assistant()
    ale = (await a.call_tool("store_memory", {"content": "Alice likes dark ale"}))["memory_id"]
    async with _client(a) as client:
        asked = await client.call_tool("delete_memory", {"memory_id": ale})
    rejected = await a.reject(asked.structured_content["approval_id"], "Mira", "keep it")
    assert rejected.status == "rejected"
    assert await _memories(a) == {ale: "Alice likes dark ale"}


async def test_entities_and_history_are_resources(make_assistant: Callable[..., Assistant]) -> None:
    a = make_assistant()
    await a.call_tool(
        "update_entity_observation", {"entity_id": "Alice", "observation": "Alice came"}
    )
    memory = (await a.call_tool("store_memory", {"content": "The mill was built in 1820"}))[
        "memory_id"
    ]
    async with _client(a) as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert resource_uri("barkeep", "entities") in uris
        assert resource_uri("barkeep", "history") in uris
        entities = await client.read_resource(resource_uri("barkeep", "entities"))
        history = await client.read_resource(resource_uri("barkeep", "history"))
    people = json.loads(entities.contents[0].text)  # type: ignore[union-attr]
    assert [p["entity_id"] for p in people["entities"]] == ["Alice"]
    changes = json.loads(history.contents[0].text)  # type: ignore[union-attr]
    assert changes["total"] >= 2
    assert memory in [e["target_key"] for e in changes["entries"]]
