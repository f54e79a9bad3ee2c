"""Session memory (the facts in every prompt) is listed, added to, edited and deleted by
people, from Python, HTTP and the command line, and every change is in the history.

Like Letta's core memory blocks: the tier that goes into every prompt is the one a person
most needs to see and correct. Engine and HTTP tests run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.history import Actor
from mindspace.errors import InvalidInputError, RecordNotFoundError
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore

ADMIN = Actor("user", "admin")
BASE = "/v1/assistants/barkeep"


async def test_items_are_added_edited_and_deleted_with_history(on_backend: Assistant) -> None:
    edits = on_backend.edits
    assert await edits.add_session_item("fact", "Dave prefers red wine", ADMIN) == 0
    assert await edits.add_session_item("fact", "The cellar floods in spring", ADMIN) == 1
    assert await edits.add_session_item("pattern", "Regulars order before noon", ADMIN) == 0

    old = await edits.update_session_item("fact", 0, "Dave prefers white wine", ADMIN)
    assert old == "Dave prefers red wine"
    gone = await edits.delete_session_item("fact", 1, ADMIN)
    assert gone == "The cellar floods in spring"

    memory = on_backend.views.session_memory()
    assert memory.key_facts == ("Dave prefers white wine",)
    assert memory.learned_patterns == ("Regulars order before noon",)
    history = on_backend.views.history(limit=10).entries
    assert [(e.action, e.target_kind, e.target_key) for e in history] == [
        ("delete", "session_fact", "1"),
        ("update", "session_fact", "0"),
        ("create", "session_pattern", "0"),
        ("create", "session_fact", "1"),
        ("create", "session_fact", "0"),
    ]
    assert history[1].before == {"index": 0, "text": "Dave prefers red wine"}
    assert history[1].after == {"index": 0, "text": "Dave prefers white wine"}
    assert history[1].actor == "admin"


async def test_an_edited_fact_is_what_the_next_prompt_holds(on_backend: Assistant) -> None:
    await on_backend.call_tool(
        "add_session_memory", {"memory_type": "fact", "content": "Dave prefers red wine"}
    )
    await on_backend.edits.update_session_item("fact", 0, "Dave prefers white wine", ADMIN)
    on_backend.enqueue_event("Hello!", source_entity="Dave")
    result = await on_backend.tick()
    prompt = "\n".join(m.content or "" for m in result.prompt.messages) if result.prompt else ""
    assert "Dave prefers white wine" in prompt
    assert "red wine" not in prompt


async def test_bad_items_are_refused_and_nothing_changes(on_backend: Assistant) -> None:
    edits = on_backend.edits
    await edits.add_session_item("fact", "Dave prefers red wine", ADMIN)
    with pytest.raises(InvalidInputError, match="I prefer"):
        await edits.add_session_item("fact", "I prefer quiet evenings", ADMIN)
    with pytest.raises(InvalidInputError, match="already in session memory"):
        await edits.add_session_item("fact", "dave prefers RED wine", ADMIN)
    with pytest.raises(InvalidInputError):
        await edits.update_session_item("fact", 0, "   ", ADMIN)
    with pytest.raises(RecordNotFoundError, match="no fact 3 \\(it has 1 facts\\)"):
        await edits.delete_session_item("fact", 3, ADMIN)
    with pytest.raises(RecordNotFoundError, match="no pattern 0"):
        await edits.update_session_item("pattern", 0, "Regulars come at noon", ADMIN)
    assert on_backend.views.session_memory().key_facts == ("Dave prefers red wine",)
    assert [e.target_kind for e in on_backend.views.history(limit=10).entries] == ["session_fact"]


# -- HTTP ------------------------------------------------------------------------------------
@pytest.fixture
async def api(
    backend_store: SqlStore, clock: ManualClock, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    backend_store.open_assistant("barkeep", create=True)
    hub = AssistantHub(
        Runtime(
            settings,
            backend_store,
            llm=OfflineLLM(announce=False),
            clock=clock,
            embedder=HashingEmbedder(64),
            owns_store=False,
        )
    )
    server = ServerSettings(
        api_token=None, api_tokens=None, api_max_body_bytes=1_048_576, api_tick_history=20
    )
    app = create_app(hub, server=server, background_ticks=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


async def test_session_items_over_http(api: httpx.AsyncClient) -> None:
    added = await api.post(f"{BASE}/session-memory/facts", json={"text": "Dave prefers red wine"})
    assert added.status_code == 200, added.text
    assert added.json() == {
        "success": True,
        "kind": "fact",
        "index": 0,
        "text": "Dave prefers red wine",
        "before": None,
    }
    edited = await api.patch(
        f"{BASE}/session-memory/facts/0",
        json={"text": "Dave prefers white wine"},
        params={"actor": "dave-asked"},
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["before"] == "Dave prefers red wine"
    shown = (await api.get(f"{BASE}/session-memory")).json()
    assert shown["key_facts"] == ["Dave prefers white wine"]

    refused = await api.post(f"{BASE}/session-memory/facts", json={"text": "I prefer ale"})
    assert refused.status_code == 422
    assert refused.json()["success"] is False
    assert "third person" in refused.json()["suggestion"]
    missing = await api.delete(f"{BASE}/session-memory/patterns/0")
    assert missing.status_code == 404
    assert "no pattern 0" in missing.json()["error"]
    unknown = await api.post(f"{BASE}/session-memory/notes", json={"text": "Dave is here"})
    assert unknown.status_code == 422

    deleted = await api.delete(f"{BASE}/session-memory/facts/0")
    assert deleted.status_code == 200, deleted.text
    assert (await api.get(f"{BASE}/session-memory")).json()["key_facts"] == []
    history = (await api.get(f"{BASE}/history")).json()["entries"]
    assert [(e["action"], e["actor"]) for e in history] == [
        ("delete", "http"),
        ("update", "dave-asked"),
        ("create", "http"),
    ]


# -- the command line ------------------------------------------------------------------------
def test_session_from_the_command_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        MINDSPACE_ASSISTANT_KEY="barkeep",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    assert run("tool", "noop").returncode == 0  # creates the assistant
    empty = run("session")
    assert "no session facts yet" in empty.stdout
    assert run("session", "add", "Dave prefers red wine").returncode == 0
    assert run("session", "add", "--pattern", "Regulars order before noon").returncode == 0
    edited = run("session", "edit", "0", "Dave prefers white wine", "--actor", "dave")
    assert edited.returncode == 0, edited.stderr
    assert "'Dave prefers red wine' -> 'Dave prefers white wine'" in edited.stdout
    listed = run("session")
    assert "0   Dave prefers white wine" in listed.stdout
    assert "0   Regulars order before noon" in listed.stdout

    refused = run("session", "add", "I prefer ale")
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: ")
    assert "third person" in refused.stderr
    assert refused.stderr.count("\n") == 1
    missing = run("session", "delete", "4")
    assert missing.returncode == 1
    assert "no fact 4 (it has 1 facts)" in missing.stderr

    assert run("session", "delete", "0").returncode == 0
    shown = json.loads(run("session", "--json").stdout)
    assert shown["key_facts"] == []
    assert shown["learned_patterns"] == ["Regulars order before noon"]
    history = json.loads(run("history", "--json").stdout)["entries"]
    assert [(e["action"], e["target_kind"], e["actor"]) for e in history] == [
        ("delete", "session_fact", "cli"),
        ("update", "session_fact", "dave"),
        ("create", "session_pattern", "cli"),
        ("create", "session_fact", "cli"),
    ]
