"""The HTTP API edits, deletes and forgets; after forgetting, no route shows the entity.

Each test runs on SQLite and on PostgreSQL, in process (httpx over ASGI).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore

BASE = "/v1/assistants/barkeep"

Teach = Callable[[Assistant], Awaitable[dict[str, str]]]


@pytest.fixture
def hub(backend_store: SqlStore, clock: ManualClock, settings: Settings) -> AssistantHub:
    backend_store.open_assistant("barkeep", create=True)
    return AssistantHub(
        Runtime(
            settings,
            backend_store,
            llm=OfflineLLM(announce=False),
            clock=clock,
            embedder=HashingEmbedder(64),
            owns_store=False,
        )
    )


@pytest.fixture
async def api(hub: AssistantHub) -> AsyncIterator[httpx.AsyncClient]:
    server = ServerSettings(
        api_token=None, api_tokens=None, api_max_body_bytes=1_048_576, api_tick_history=20
    )
    app = create_app(hub, server=server, background_ticks=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@pytest.fixture
async def known(hub: AssistantHub, teach: Teach) -> dict[str, str]:
    return await teach(hub.get("barkeep"))


async def everything_shown(api: httpx.AsyncClient) -> str:
    """Every read route's answer about the assistant, as one text."""
    shown: list[Any] = []
    for path in (
        "/memories?limit=200",
        "/memories?query=dark%20ale",
        "/journal?limit=200",
        "/journal?query=ale",
        "/entities",
        "/working-memory",
        "/memory-links",
        "/goals",
        "/session-memory",
        "/events",
    ):
        answer = await api.get(BASE + path)
        assert answer.status_code == 200, (path, answer.text)
        shown.append(answer.json())
    for tool, args in (
        ("recall_memories", {"query": "dark ale"}),
        ("search_journal", {"query": "dark ale"}),
        ("search_episodic_memory", {"query": "dark ale"}),
    ):
        answer = await api.post(f"{BASE}/tools/{tool}", json=args)
        assert answer.status_code == 200, (tool, answer.text)
        shown.append(answer.json())
    return json.dumps(shown)


async def test_after_forgetting_an_entity_no_route_returns_anything_of_it(
    api: httpx.AsyncClient, known: dict[str, str]
) -> None:
    assert "Alice" in await everything_shown(api)
    dry = await api.post(f"{BASE}/entities/Alice/forget", params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    assert dry.json()["dry_run"] is True
    assert dry.json()["memory_ids"] == [known["memory_Alice"]]
    assert "Alice" in await everything_shown(api)  # the dry run changed nothing

    forgot = await api.post(f"{BASE}/entities/Alice/forget", params={"actor": "alice-request"})

    assert forgot.status_code == 200, forgot.text
    assert forgot.json()["counts"]["journal_entries"] == 1
    assert "Alice" not in await everything_shown(api)
    assert "Bob" in await everything_shown(api)
    missing = await api.get(f"{BASE}/entities/Alice")
    assert missing.status_code == 404
    again = await api.post(f"{BASE}/entities/Alice/forget")
    assert again.status_code == 404
    assert again.json()["success"] is False
    assert "Nothing is known" in again.json()["error"]
    history = (await api.get(f"{BASE}/history")).json()
    assert history["entries"][0]["actor"] == "alice-request"
    assert history["entries"][0]["action"] == "forget"


async def test_memories_journal_and_goals_are_edited_and_deleted_over_http(
    api: httpx.AsyncClient, known: dict[str, str]
) -> None:
    memory = known["memory_plain"]
    edited = await api.patch(f"{BASE}/memories/{memory}", json={"content": "The cellar is dry"})
    assert edited.status_code == 200, edited.text
    assert edited.json()["record"]["content"] == "The cellar is dry"
    page = (await api.get(f"{BASE}/memories", params={"limit": 200})).json()
    assert "The cellar is dry" in [m["content"] for m in page["memories"]]

    entry = known["entry_Bob"]
    patched = await api.patch(f"{BASE}/journal/{entry}", json={"importance": 9})
    assert patched.json()["record"]["importance"] == 9
    assert (await api.delete(f"{BASE}/journal/{entry}")).status_code == 200
    assert (await api.delete(f"{BASE}/memories/{memory}")).status_code == 200
    journal = (await api.get(f"{BASE}/journal")).json()
    assert int(entry) not in [e["id"] for e in journal["entries"]]

    goal = (await api.post(f"{BASE}/tools/add_goal", json={"description": "Mend the roof"})).json()
    done = await api.patch(f"{BASE}/goals/{goal['goal_id']}", json={"status": "completed"})
    assert done.json()["record"]["status"] == "completed"
    assert (await api.delete(f"{BASE}/goals/{goal['goal_id']}")).json()["ids"] == [goal["goal_id"]]
    assert (await api.get(f"{BASE}/goals")).json()["total"] == 0

    history = (await api.get(f"{BASE}/history", params={"limit": 3})).json()
    assert history["total"] == 7 + 7  # 7 tool writes filled it, 7 changes here
    assert [e["action"] for e in history["entries"]] == ["delete", "update", "create"]
    assert [e["actor_kind"] for e in history["entries"]] == ["user", "user", "host"]
    assert history["entries"][2]["via"] == "tool:add_goal"


async def test_bad_edits_get_the_api_error_shape(
    api: httpx.AsyncClient, known: dict[str, str]
) -> None:
    absent = await api.delete(f"{BASE}/memories/mem_999")
    assert absent.status_code == 404
    assert absent.json()["success"] is False
    assert "mem_999" in absent.json()["error"]
    unknown = await api.patch(f"{BASE}/goals/goal_x", json={"colour": "red"})
    assert unknown.status_code == 422
    assert unknown.json()["success"] is False
    blank = await api.patch(f"{BASE}/journal/{known['entry_Alice']}", json={"content": "   "})
    assert blank.status_code == 422
    assert "empty" in blank.json()["error"]


async def test_entities_are_edited_and_the_routes_are_documented(
    api: httpx.AsyncClient, known: dict[str, str]
) -> None:
    body = {"attributes": {"drink": "stout"}, "remove_observations": [0]}
    edited = await api.patch(f"{BASE}/entities/Alice", json=body)
    assert edited.status_code == 200, edited.text
    assert edited.json()["record"]["attributes"] == {"drink": "stout"}
    assert (await api.get(f"{BASE}/entities/Alice")).json()["entity"]["observations"] == []

    paths = (await api.get("/openapi.json")).json()["paths"]
    operations = {
        (method, path): operation
        for path, methods in paths.items()
        for method, operation in methods.items()
        if operation.get("tags") == ["edits"]
    }
    assert {op["operationId"] for op in operations.values()} == {
        "edit_memory",
        "delete_memory",
        "edit_journal_entry",
        "delete_journal_entry",
        "edit_goal",
        "delete_goal",
        "edit_entity",
        "forget_entity",
        "list_history",
        "add_session_item",
        "edit_session_item",
        "delete_session_item",
    }
    for (method, path), operation in operations.items():
        documented = set(operation["responses"])
        assert {"200", "401", "403", "404", "422"} <= documented, (method, path)
        assert "$ref" in str(operation["responses"]["200"]), (method, path)
