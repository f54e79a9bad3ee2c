"""Forgetting is provable: five secrets told through every entrance are nowhere afterwards.

Eve's secrets go in through the Python tools, the HTTP tool routes, MCP (in process, the
SDK's own client), a direct HTTP edit, a conversation (an event and a tick) and, on
SQLite, ``mindspace chat --as Eve`` in another process. After
``POST .../entities/Eve/forget`` every GET route of the API, every MCP resource, an
export and the database itself (the SQLite file with its write-ahead log; every row on
PostgreSQL) are searched for them. The same search before forgetting finds each secret,
so the search can fail. Runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from sqlalchemy import create_engine, text

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.assistant import Assistant
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.hosts.mcp import build_server
from mindspace.hosts.mcp.server import RESOURCES, resource_uri
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore
from mindspace.storage.sql import sqlite_file
from mindspace.transfer import export_assistant

# One word each, in lower case: a search index's terms (PostgreSQL's postings) hold them too.
SECRETS = ("vaultcode4711", "swordfishpw", "marigoldkey", "locker31415", "badgeq7x9z")
CHAT_SECRET = "chatpin8086"
"""Said in `mindspace chat --as Eve` (a second process, on the SQLite file)."""
KEY = "tavern"
API = f"/v1/assistants/{KEY}"


@pytest.fixture
async def served(
    backend_url: str, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, AssistantHub, SqlStore]]:
    store = SqlStore(backend_url)
    hub = AssistantHub(
        Runtime(
            Settings(data_dir=tmp_path),
            store,
            llm=OfflineLLM(announce=False),
            clock=ManualClock(),
            embedder=HashingEmbedder(256),
            owns_store=False,
        )
    )
    server = ServerSettings(
        api_token=None,
        api_tokens=None,
        api_max_body_bytes=1_048_576,
        api_tick_history=20,
        api_max_streams=8,
        api_stream_heartbeat=15.0,
    )
    app = create_app(hub, server=server, background_ticks=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client, hub, store
    hub.close()
    store.close()


async def tell_secrets(client: httpx.AsyncClient, assistant: Assistant) -> None:
    """One secret per entrance, every one said by or about Eve."""
    stored = await assistant.call_tool(
        "store_memory", {"content": f"Eve vault code is {SECRETS[0]}", "source_entity": "Eve"}
    )
    assert stored["success"], stored
    # An edit by hand keeps the before and after in the history.
    edited = await client.patch(
        f"{API}/memories/{stored['memory_id']}",
        json={"content": f"Eve vault code is {SECRETS[0]} (checked twice)"},
    )
    assert edited.status_code == 200, edited.text
    journal = await client.post(
        f"{API}/tools/add_journal_entry",
        json={"content": f"Eve whispered the password {SECRETS[1]}", "source_entity": "Eve"},
    )
    assert journal.status_code == 200, journal.text
    async with Client(build_server(lambda ctx: assistant)) as mcp:
        observed = await mcp.call_tool(
            "update_entity_observation",
            {"entity_id": "Eve", "observation": f"Eve hides the {SECRETS[2]} under the mat"},
        )
        assert not observed.is_error, observed
        fact = await mcp.call_tool(
            "add_session_memory",
            {"memory_type": "fact", "content": f"Eve's locker combination is {SECRETS[3]}"},
        )
        assert not fact.is_error, fact
    said = await client.post(
        f"{API}/events",
        json={
            "type": "whisper",
            "source_entity": "Eve",
            "content": f"My badge number is {SECRETS[4]}, keep it between us",
        },
    )
    assert said.status_code in (200, 201, 202), said.text
    ticked = await client.post(f"{API}/tick")
    assert ticked.status_code == 200, ticked.text


def chat_as_eve(db_file: Path, tmp_path: Path) -> None:
    """`mindspace chat --as Eve` in its own process, on the same database file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_DATA_DIR": str(tmp_path), "MINDSPACE_EMBEDDER": "hashing"})
    env["PYTHONIOENCODING"] = "utf-8"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mindspace.hosts.cli.app", "chat", "--as", "Eve"),
            *("--db", str(db_file), "--assistant", KEY),
        ],
        input=f"My locker pin is {CHAT_SECRET}, remember it\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


async def everything_readable(
    client: httpx.AsyncClient, assistant: Assistant, store: SqlStore, db_file: Path | None
) -> dict[str, str]:
    """Every place a person or a program can read, as text, by where it came from."""
    seen: dict[str, str] = {}
    paths = (await client.get("/openapi.json")).json()["paths"]
    entities = (await client.get(f"{API}/entities")).json()
    events = (await client.get(f"{API}/events", params={"limit": 1000})).json()
    ticks = (await client.get(f"{API}/ticks")).json()
    fill: dict[str, list[str]] = {
        "{key}": [KEY],
        "{entity_id}": ["Eve", *(e["entity_id"] for e in entities.get("entities", []))],
        "{event_id}": [e["id"] for e in events.get("events", [])],
        "{number}": [str(t["number"]) for t in ticks.get("ticks", [])],
    }
    for path, methods in paths.items():
        if "get" not in methods or path.endswith("/stream"):
            continue
        urls = [path]
        for name, values in fill.items():
            urls = [u.replace(name, v) for u in urls for v in values] if name in path else urls
        for url in urls:
            if "{" in url:
                continue
            answer = await client.get(url, params={"limit": 1000} if "{" not in path else None)
            seen[f"GET {url}"] = answer.text
    for page in ("/", "/dashboard/", "/dashboard/app.js"):
        seen[f"GET {page}"] = (await client.get(page)).text
    async with Client(build_server(lambda ctx: assistant)) as mcp:
        for name in RESOURCES:
            read = await mcp.read_resource(resource_uri(KEY, name))
            seen[f"MCP {name}"] = json.dumps([c.model_dump(mode="json") for c in read.contents])
    out = io.StringIO()
    export_assistant(store, KEY, out)
    seen["export"] = out.getvalue()
    if db_file is not None:
        for suffix in ("", "-wal"):
            path = Path(f"{db_file}{suffix}")
            if path.exists():
                seen[f"file {path.name}"] = path.read_bytes().decode("latin-1")
    else:
        # Every table, those made by raw SQL (search postings, statistics) included.
        engine = create_engine(store.url)
        with engine.connect() as conn:
            names = conn.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            for name in list(names):
                rows = conn.execute(text(f'SELECT * FROM "{name}"')).all()
                seen[f"table {name}"] = repr(rows)
        engine.dispose()
    return seen


def where(secret: str, seen: dict[str, str]) -> list[str]:
    return [place for place, text in seen.items() if secret in text]


async def test_five_secrets_are_nowhere_after_forgetting(
    served: tuple[httpx.AsyncClient, AssistantHub, SqlStore],
) -> None:
    client, hub, store = served
    created = await client.post("/v1/assistants", json={"key": KEY})
    assert created.status_code in (200, 201), created.text
    assistant = hub.get(KEY)
    await tell_secrets(client, assistant)
    db_file = sqlite_file(store.url)
    secrets = SECRETS
    if db_file is not None:
        chat_as_eve(db_file, db_file.parent)
        secrets = (*SECRETS, CHAT_SECRET)

    before = await everything_readable(client, assistant, store, db_file)
    for secret in secrets:
        assert where(secret, before), f"{secret!r} was never stored: the search proves nothing"

    listed_memories = (await client.get(f"{API}/memories", params={"limit": 200})).json()
    memories = listed_memories["memories"]
    from_eve = [m["id"] for m in memories if m["metadata"].get("source_entity") == "Eve"]
    assert from_eve  # the stored and edited one at least (hosts may keep her words too)
    dry = await client.post(f"{API}/entities/Eve/forget", params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    listed = dry.json()
    assert listed["counts"]["session_facts"] == 1
    assert listed["counts"]["events"] >= 1
    assert listed["redacted"]["history"] >= 3  # the tool calls' and the edit's records

    forgot = await client.post(f"{API}/entities/Eve/forget", params={"actor": "privacy-officer"})
    assert forgot.status_code == 200, forgot.text
    assert forgot.json()["redacted"]["tick_log"] >= 1

    after = await everything_readable(client, assistant, store, db_file)
    leaks = {secret: where(secret, after) for secret in secrets}
    assert leaks == {secret: [] for secret in secrets}

    history = (await client.get(f"{API}/history", params={"limit": 1000})).json()["entries"]
    line = next(e for e in history if e["action"] == "forget")
    assert (line["actor"], line["target_key"]) == ("privacy-officer", "Eve")
    assert line["at"]
    assert sorted(line["before"]["memory_ids"]) == sorted(from_eve)
    # Still readable after the rewrite: nothing stored that does not load.
    assert (await client.get(f"{API}/status")).status_code == 200
