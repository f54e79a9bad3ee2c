"""The quirk-mode matrix: the chat REPL, an HTTP event and a sleep night against each way
a real OpenAI-compatible server misbehaves (see ``mindspace.testing.quirks``).

The model is a function-backed stand-in behind :class:`ChatCompletionsServer` with
keep-alive, reached through the real ``openai`` client: asked with tools and no tool
result yet, it calls ``add_goal``; after a tool result it answers in prose; asked to
continue a cut reply, it sends the rest; asked to rate importance, it answers ``8``.
What changes per mode is only how the server puts that on the wire, so every mode must
end the same way for the user, except ``bad_json``, which must fail cleanly.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mindspace import Assistant, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.loop import CONTINUE_PROMPT
from mindspace.engine.records import Event
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.journal.records import JournalEntry
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer, Quirk, Step
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records
from mindspace.workspace.records import Goal

REPLY = "Gladly, Alice. I have noted it down for you."
FIRST_WORDS = 5  # QuirkSettings.length_words: the length quirk cuts after these
REST = " " + " ".join(REPLY.split()[FIRST_WORDS:])
# drops_tools changes what the model sees (no tools at all), not how the same answer is
# put on the wire; tests/e2e/test_doctor.py covers it.
MODES: list[Quirk | None] = [None, *(q for q in Quirk if q is not Quirk.DROPS_TOOLS)]
LINES = ["Could you find me a room for tonight?", "And a warm meal, please."]


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return str(message.get("content") or "")
    return ""


def model(body: dict[str, Any]) -> Step:
    """A well-behaved model; the server's quirk mode decides how its answer is sent."""
    messages: list[dict[str, Any]] = body["messages"]
    text = "\n".join(str(m.get("content") or "") for m in messages)
    if messages[-1]["role"] == "user" and messages[-1].get("content") == CONTINUE_PROMPT:
        return Step(content=REST)
    if "Rate the significance of this event" in text:
        return Step(content="8")
    if not body.get("tools"):
        return Step(content="[]")
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    if any(m["role"] == "tool" for m in messages[last_user:]):
        return Step(content=REPLY)
    request = _last_user_text(messages).rsplit("]", 1)[-1].strip()
    return Step(
        tool_calls=[{"name": "add_goal", "arguments": {"description": f"Help Alice: {request}"}}]
    )


@pytest.fixture(params=MODES, ids=lambda q: q.value if q else "default")
def server(request: pytest.FixtureRequest) -> Iterator[ChatCompletionsServer]:
    """The stand-in model behind a keep-alive server in one quirk mode (or none)."""
    quirks = [request.param] if request.param else []
    with ChatCompletionsServer(quirks=quirks, respond=model) as running:
        yield running


def _env(tmp_path: Path, server: ChatCompletionsServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        MINDSPACE_LLM_BASE_URL=server.url,
        MINDSPACE_LLM_MODEL="scripted",
        MINDSPACE_LLM_API_KEY="test-key",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )
    return env


def _mindspace(
    tmp_path: Path, server: ChatCompletionsServer, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
        env=_env(tmp_path, server),
        check=False,
    )


def _failed_cleanly(server: ChatCompletionsServer) -> bool:
    return Quirk.BAD_JSON in server.quirks


def _stored(db: Path) -> Assistant:
    return assistant_on(
        SqlStore.from_path(db), "barkeep", create=False, llm=OfflineLLM(announce=False)
    )


def test_the_chat_repl(tmp_path: Path, server: ChatCompletionsServer) -> None:
    db = tmp_path / "chat.db"
    done = _mindspace(
        tmp_path,
        server,
        "chat",
        "--as",
        "Alice",
        "--db",
        str(db),
        "--assistant",
        "barkeep",
        stdin="\n".join([*LINES, "/quit"]) + "\n",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    events = _stored(db)._core.read().all(Event)
    assert len(events) == 2
    if _failed_cleanly(server):
        assert output.count("error: LLMResponseError") == 2, output
        assert "not json {" in output  # the excerpt of what the server sent
        assert {e.status for e in events} == {"failed"}
        assert _stored(db)._core.read().all(Goal) == []
        return
    assert output.count(f"barkeep says to Alice: {REPLY}") == 2, output
    assert '"name"' not in output
    assert "tool_call" not in output
    assert {e.status for e in events} == {"done"}
    goals = sorted(g.description for g in _stored(db)._core.read().all(Goal))
    assert goals == sorted(f"Help Alice: {line}" for line in LINES)
    assert server.connections < len(server.requests)  # the client kept its connection


async def test_an_http_event(tmp_path: Path, server: ChatCompletionsServer) -> None:
    store = SqlStore.from_path(tmp_path / "http.db")
    llm = OpenAICompatibleLLM(base_url=server.url, model="scripted", backoff=0.01)
    hub = AssistantHub(
        Runtime(Settings(), store, llm=llm, embedder=HashingEmbedder(256), owns_store=False)
    )
    open_api = ServerSettings(api_token=None, api_tokens=None)
    app = create_app(hub, server=open_api, background_ticks=False)
    base = "/v1/assistants/barkeep"
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            assert (await client.post("/v1/assistants", json={"key": "barkeep"})).status_code == 201
            sent = await client.post(
                f"{base}/events", json={"content": LINES[0], "source_entity": "Alice"}
            )
            assert sent.status_code == 202, sent.text
            ticked = await client.post(f"{base}/tick")
            assert ticked.status_code == 200, ticked.text
            body = ticked.json()
            event = (await client.get(f"{base}/events/{sent.json()['event_id']}")).json()["event"]
            goals = (await client.get(f"{base}/goals")).json()
    finally:
        await llm.aclose()
        hub.close()
    if _failed_cleanly(server):
        assert body["status"] == "failed"
        assert "not json {" in body["error"]
        assert event["status"] == "failed"
        assert json.dumps(goals).count("Help Alice") == 0
        return
    assert body["status"] == "done", body
    assert body["reply"] == REPLY
    assert body["outcome"] == "replied"
    assert body["cut"] == ("continued" if Quirk.LENGTH in server.quirks else None)
    assert event["status"] == "done"
    assert event["reply"] == REPLY
    assert f"Help Alice: {LINES[0]}" in json.dumps(goals)


def test_a_sleep_night(tmp_path: Path, server: ChatCompletionsServer) -> None:
    db = tmp_path / "night.db"
    entries = [
        "Alice traded three silver rings for a lantern",
        "Bob warned that the north bridge is closing for repairs",
        "Carol paid her debt of twelve coins",
    ]
    store = SqlStore.from_path(db)
    opened = _stored_new(store)
    for text in entries:
        added = asyncio.run(opened.call_tool("add_journal_entry", {"content": text}))
        assert added["success"] is True, added
    store.close()
    done = _mindspace(tmp_path, server, "sleep", "--run", "--db", str(db), "--assistant", "barkeep")
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    opened = _stored(db)
    after = opened._core.read()
    stored_entries = after.all(JournalEntry)
    assert sorted(e.content for e in stored_entries) == sorted(entries)  # nothing is lost
    assert done.returncode == 0, output
    contents = {m.content for m in stored_records(opened, Memory)}
    assert set(entries) <= contents, contents  # consolidated, whatever the model did
    if _failed_cleanly(server):
        # The model never answered: scores stay heuristic and the report says why.
        assert all(e.importance_method == "heuristic" for e in stored_entries)
        assert "0 entries scored by the LLM" in output
        assert "not JSON" in output
        return
    assert all(e.importance == 8 for e in stored_entries)
    assert all(e.importance_method == "llm" for e in stored_entries)


def _stored_new(store: SqlStore) -> Assistant:
    return assistant_on(
        store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        embedder=HashingEmbedder(256),
    )
