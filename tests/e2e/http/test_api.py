"""The /v1 API through httpx: assistants, events and ticks, tools, state, modes, ticks log."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx

from mindspace import ManualClock
from mindspace.hosts.http import AssistantHub

A = "/v1/assistants/barkeep"


async def _create(client: httpx.AsyncClient, key: str = "barkeep") -> None:
    response = await client.post("/v1/assistants", json={"key": key})
    assert response.status_code == 201, response.text


async def _say(client: httpx.AsyncClient, text: str, who: str = "Alice") -> dict[str, Any]:
    sent = await client.post(f"{A}/events", json={"content": text, "source_entity": who})
    assert sent.status_code == 202, sent.text
    ticked = await client.post(f"{A}/tick")
    assert ticked.status_code == 200, ticked.text
    body: dict[str, Any] = ticked.json()
    assert body["event_id"] == sent.json()["event_id"]
    return body


async def test_health_needs_nothing(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/health")
    assert response.json()["status"] == "ok"


async def test_assistants_are_created_listed_and_read(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/assistants")).json()["assistants"] == []
    await _create(client)
    again = await client.post("/v1/assistants", json={"key": "barkeep"})
    assert again.status_code == 409
    assert again.json()["success"] is False
    assert "already exists" in again.json()["error"]
    assert (await client.get("/v1/assistants")).json()["assistants"] == ["barkeep"]
    one = (await client.get(A)).json()["assistant"]
    assert one["key"] == "barkeep"
    assert one["mode"] == "awake"
    assert one["model"] == "mindspace-offline"
    assert one["token_advisory"]["level"] == "normal"
    missing = await client.get("/v1/assistants/nobody")
    assert missing.status_code == 404
    assert "'nobody'" in missing.json()["error"]


async def test_a_chat_message_becomes_goals_and_a_reply(client: httpx.AsyncClient) -> None:
    await _create(client)
    done = await _say(client, "Can you build a tavern with a bar, a kitchen and rooms?")
    assert done["status"] == "done"
    assert done["reply"].startswith("I'll see to it, Alice.")
    event = (await client.get(f"{A}/events/{done['event_id']}")).json()["event"]
    assert event["status"] == "done"
    assert event["reply"] == done["reply"]
    tree = (await client.get(f"{A}/goals")).json()
    root = tree["goals"][0]
    assert root["description"] == "Build a tavern with a bar, a kitchen and rooms"
    assert len(root["subtasks"]) == 5
    assert tree["counts"]["active"] == 6
    tick = done["tick"]
    assert [c["name"] for c in tick["loop"]["calls"]] == ["add_goal", "decompose_goal"]
    assert tick["pattern"]["source_layers"]["mode"] == "context"
    keys = [c["key"] for c in tick["prompt"]["components"]]
    assert keys[0] == "system_prompt"
    assert "pending_event" in keys
    assert all(isinstance(c["tokens"], int) for c in tick["prompt"]["components"])


async def test_unknown_event_and_empty_queue(client: httpx.AsyncClient) -> None:
    await _create(client)
    missing = await client.get(f"{A}/events/evt_nope")
    assert missing.status_code == 404
    assert missing.json()["suggestion"]
    idle = (await client.post(f"{A}/tick")).json()
    assert idle["kind"] == "idle"
    assert idle["tick"] is None
    assert (await client.get(f"{A}/events")).json()["events"] == []


async def test_tools_by_name_return_the_spec_shape(client: httpx.AsyncClient) -> None:
    await _create(client)
    added = await client.post(f"{A}/tools/add_goal", json={"description": "Fix the gate"})
    assert added.status_code == 200
    assert added.json()["success"] is True
    assert added.json()["goal"]["description"] == "Fix the gate"
    no_body = await client.post(f"{A}/tools/get_system_status")
    assert no_body.status_code == 200
    assert no_body.json()["token_usage"]["model_limit"] == 128_000
    unknown = await client.post(f"{A}/tools/add_gaol", json={})
    assert unknown.status_code == 404
    assert "add_goal" in unknown.json()["closest_tools"]
    invalid = await client.post(f"{A}/tools/add_goal", json={"priority": "urgent"})
    assert invalid.status_code == 422
    assert invalid.json()["success"] is False
    assert invalid.json()["suggestion"]
    missing = await client.post(f"{A}/tools/update_goal", json={"goal_id": "goal_9", "progress": 5})
    assert missing.status_code == 404
    persona = await client.post(
        f"{A}/tools/add_session_memory",
        json={"memory_type": "fact", "content": "I helped Alice find the cellar"},
    )
    assert persona.status_code == 422
    assert persona.json()["rejected_content"] == "I helped Alice find the cellar"
    catalogue = (await client.get("/v1/tools")).json()["tools"]
    assert {"add_goal", "recall_memories"} <= {t["name"] for t in catalogue}


async def test_state_views(client: httpx.AsyncClient, clock: ManualClock) -> None:
    await _create(client)
    await _say(client, "I prefer dark ale by the fire.")
    for key in ("build_tavern", "quest_design"):
        created = await client.post(
            f"{A}/tools/create_project", json={"project_key": key, "summary": f"Do {key}"}
        )
        assert created.status_code == 200
    for n in range(25):
        clock.advance(minutes=1)
        await client.post(
            f"{A}/tools/add_journal_entry",
            json={
                "content": f"Bob paid {n} coins for ale",
                "tags": ["trade"] if n % 2 else [],
                "related_projects": ["build_tavern"],
                "source_entity": "Bob",
            },
        )
    projects = (await client.get(f"{A}/projects")).json()
    assert projects["active"] == "build_tavern"
    assert [p["key"] for p in projects["projects"]] == ["build_tavern", "quest_design"]
    memory = (await client.get(f"{A}/session-memory")).json()
    assert memory["key_facts"] == ["Alice prefers dark ale by the fire"]
    page = (await client.get(f"{A}/journal", params={"limit": 10, "offset": 10})).json()
    assert page["total"] == 25
    assert len(page["entries"]) == 10
    assert page["entries"][0]["content"] == "Bob paid 14 coins for ale"
    assert {"importance", "importance_method", "source_trust"} <= set(page["entries"][0])
    assert page["reflection"]["threshold"] == 150
    tagged = (await client.get(f"{A}/journal", params={"tag": "trade"})).json()
    assert tagged["total"] == 12
    found = (await client.get(f"{A}/journal", params={"query": "paid 7 coins"})).json()
    assert [e["content"] for e in found["entries"]] == ["Bob paid 7 coins for ale"]
    other = (await client.get(f"{A}/journal", params={"project": "quest_design"})).json()
    assert other["total"] == 0
    entities = (await client.get(f"{A}/entities")).json()["entities"]
    alice = next(e for e in entities if e["entity_id"] == "Alice")
    assert alice["relationship"]["state"] == "stranger"
    assert alice["relationship"]["interaction_count"] == 1
    one = await client.get(f"{A}/entities/Alice")
    assert one.json()["entity"]["entity_id"] == "Alice"
    assert (await client.get(f"{A}/entities/Nobody")).status_code == 404
    working = (await client.get(f"{A}/working-memory")).json()
    assert "Alice" in working["conversations"]
    status = (await client.get(f"{A}/status")).json()
    assert status["session_metrics"]["total_tool_calls"] >= 27
    # The 25 entries wait for the night: none scored by the model or consolidated yet.
    assert status["night_backlog"]["unscored"] == 25
    assert status["night_backlog"]["unconsolidated"] == 25


async def test_memories_search_and_link_graph(client: httpx.AsyncClient) -> None:
    await _create(client)
    for text in ("Alice prefers dark ale", "The north gate is broken", "Alice dislikes rats"):
        stored = await client.post(
            f"{A}/tools/store_memory", json={"content": text, "source_entity": "Alice"}
        )
        assert stored.status_code == 200, stored.text
    listed = (await client.get(f"{A}/memories")).json()
    assert listed["total"] == 3
    assert "embedding" not in listed["memories"][0]
    ranked = (await client.get(f"{A}/memories", params={"query": "ale"})).json()
    assert ranked["memories"][0]["content"] == "Alice prefers dark ale"
    assert ranked["memories"][0]["score"] > 0
    graph = (await client.get(f"{A}/memory-links")).json()
    assert len(graph["nodes"]) == 3
    assert graph["edges"] == []
    assert graph["processed"] == 0


async def test_sleep_wake_and_sleep_ticks(client: httpx.AsyncClient, hub: AssistantHub) -> None:
    await _create(client)
    slept = await client.post(f"{A}/sleep", json={"reason": "closing time", "hours": 2})
    assert slept.json()["mode"]["mode"] == "sleep"
    mode = (await client.get(f"{A}/mode")).json()
    # Every sleep says when it ends: here two hours after it began.
    assert slept.json()["wake_at"] == mode["wake_at"]
    began = datetime.fromisoformat(mode["since"])
    assert datetime.fromisoformat(mode["wake_at"]) - began == timedelta(hours=2)
    assert mode["sleep_phase"] == "compacting"
    assert mode["tick_rate"] == 60
    tick = (await client.post(f"{A}/tick")).json()
    assert tick["kind"] == "sleep"
    assert tick["tick"]["sleep"]["phase"] == "compacting"
    woke = await client.post(f"{A}/wake")
    assert woke.json()["mode"]["mode"] == "awake"
    assert (await client.get(f"{A}/mode")).json()["tick_rate"] == 5
    assert hub.get("barkeep").views.mode().mode == "awake"


async def test_the_tick_log_keeps_recent_ticks(client: httpx.AsyncClient) -> None:
    await _create(client)
    for n in range(3):
        await _say(client, f"Hello number {n}")
    ticks = (await client.get(f"{A}/ticks")).json()["ticks"]
    assert [t["number"] for t in ticks] == [3, 2, 1]
    assert ticks[0]["reply"] == "Hello, Alice! What can I do for you?"
    assert "prompt" not in ticks[0]
    full = (await client.get(f"{A}/ticks/1")).json()["tick"]
    assert full["prompt"]["components"][0]["content"].startswith("You are barkeep")
    gone = await client.get(f"{A}/ticks/99")
    assert gone.status_code == 404
    assert gone.json()["success"] is False


async def test_approvals_are_listed_and_unknown_ones_refused(client: httpx.AsyncClient) -> None:
    await _create(client)
    assert (await client.get(f"{A}/approvals")).json()["approvals"] == []
    approve = await client.post(f"{A}/approvals/appr_1/approve", json={"decided_by": "admin"})
    assert approve.status_code == 404
    assert "appr_1" in approve.json()["error"]
    reject = await client.post(f"{A}/approvals/appr_1/reject")
    assert reject.status_code == 404


async def test_errors_have_our_shape(client: httpx.AsyncClient) -> None:
    await _create(client)
    for response in (
        await client.get("/v1/nowhere"),
        await client.delete(A),
        await client.post(f"{A}/events", json={"content": "hi", "colour": "red"}),
        await client.post(
            f"{A}/events", content=b"{not json", headers={"content-type": "application/json"}
        ),
        await client.post(f"{A}/events", json={"content": "   "}),
        await client.get(f"{A}/journal", params={"limit": 0}),
        await client.get("/v1/assistants/bad key!"),
    ):
        body = response.json()
        assert 400 <= response.status_code < 500, (response.status_code, body)
        assert body["success"] is False
        assert body["error"]
        assert body["suggestion"]


async def test_the_schema_and_the_dashboard_are_served(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert "/v1/assistants/{key}/tools/{name}" in schema["paths"]
    assert "/v1/assistants/{key}/stream" in schema["paths"]
    page = await client.get("/dashboard/")
    assert page.status_code == 200
    assert '<script type="module" src="app.js">' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert (await client.get("/dashboard/app.js")).status_code == 200
    root = await client.get("/")
    assert root.status_code == 307
    assert root.headers["location"] == "/dashboard/"
