"""The same hostile strings at every entrance, on SQLite and PostgreSQL (a property test).

Lone surrogates, NUL, right-to-left marks, a byte-order mark, 1 MB of text and JSON
nested 100,000 deep go in through the Python tools, the HTTP API (as JSON escapes, the
way they travel), MCP (in process, the SDK's client; and raw lines through the stdio
screen), the model (its reply text and its tool calls) and an import. Nothing may raise
out of an entrance, no response may be a 5xx, and whatever was stored must still be
read back, exported and imported again. Hypothesis adds a few generated strings to the
fixed ones; the examples are few so the run stays short.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.hosts.mcp import build_server
from mindspace.hosts.mcp.jsonrpc import screen
from mindspace.llm import LLMResponse
from mindspace.llm.port import Message, ToolCall, ToolSchema
from mindspace.llm.scripted import FunctionLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore
from mindspace.transfer import TransferError, export_assistant, import_assistant

KEY = "barkeep"
API = f"/v1/assistants/{KEY}"
DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE = (
    "lone \ud800 surrogate",
    "\udfff\ud800 reversed pair",
    "nul \x00 inside",
    "\u202eright-to-left override\u202c and \u200f mark",
    "\ufeffbyte order mark",
    "x" * 1_000_000,
    "plain 😀 emoji",
)


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


class Said:
    """What the model says next: the string under test (set by each example)."""

    text = ""

    def respond(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        if not tools or messages[-1].role == "tool":
            return LLMResponse(text=self.text)
        arguments = json.dumps({"content": self.text, "source_entity": "Eve"})
        raw = '{"description": "' + self.text[:100] + '"}'  # not escaped: raw NUL and all
        return LLMResponse(
            text=self.text,
            tool_calls=(
                ToolCall("c1", "store_memory", arguments),
                ToolCall("c2", "add_goal", raw),
            ),
        )


@pytest.fixture
async def world(
    backend_url: str, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, AssistantHub, SqlStore, Said, Path]]:
    store = SqlStore(backend_url)
    said = Said()
    hub = AssistantHub(
        Runtime(
            Settings(data_dir=tmp_path),
            store,
            llm=FunctionLLM(said.respond),
            clock=ManualClock(),
            embedder=HashingEmbedder(64),
            owns_store=False,
        )
    )
    hub.create(KEY)
    server = ServerSettings(api_token=None, api_tokens=None, api_max_body_bytes=2_000_000)
    app = create_app(hub, server=server, background_ticks=False)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client, hub, store, said, tmp_path
    hub.close()
    store.close()


async def _through_http(client: httpx.AsyncClient, text: str) -> list[int]:
    escaped = json.dumps(text)  # "\ud800" and "\u0000" travel as JSON escapes
    bodies = [
        ("tools/add_journal_entry", '{"content": ' + escaped + ', "source_entity": "Eve"}'),
        ("tools/add_goal", '{"description": ' + escaped + "}"),
        ("tools/update_entity_observation", '{"entity_id": ' + escaped + ', "observation": "o"}'),
        ("events", '{"content": ' + escaped + ', "source_entity": ' + escaped[:200] + "}"),
        ("tools/store_memory", '{"content": ' + DEEP + "}"),
    ]
    codes = []
    for route, body in bodies:
        sent = await client.post(
            f"{API}/{route}", content=body, headers={"content-type": "application/json"}
        )
        codes.append(sent.status_code)
    return codes


async def _readable_everywhere(client: httpx.AsyncClient, store: SqlStore, folder: Path) -> None:
    """Read every view over HTTP, export, import the export elsewhere and export it again."""
    reads = ["goals", "projects", "session-memory", "journal", "memories", "memory-links"]
    reads += ["entities", "working-memory", "status", "mode", "history", "events", "ticks"]
    for read in reads:
        answer = await client.get(
            f"{API}/{read}",
            params={"limit": 200} if read in ("journal", "memories", "history", "events") else None,
        )
        assert answer.status_code == 200, (read, answer.text[:500])
    for profile in (await client.get(f"{API}/entities")).json()["entities"]:
        one = await client.get(f"{API}/entities/{quote(profile['entity_id'], safe='')}")
        assert one.status_code in (200, 404), one.text[:500]  # an id no path can carry: 404
    out = io.StringIO()
    export_assistant(store, KEY, out)
    path = folder / "round.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    import_assistant(store, path, key="copy", replace=True)
    again = io.StringIO()
    export_assistant(store, "copy", again)
    records = [line for line in again.getvalue().splitlines()[1:-1]]
    assert records == out.getvalue().splitlines()[1:-1]


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=st.text(min_size=1, max_size=40))
@example(text=HOSTILE[0])
@example(text=HOSTILE[1])
@example(text=HOSTILE[2])
@example(text=HOSTILE[3])
@example(text=HOSTILE[4])
@example(text=HOSTILE[5])
@example(text=HOSTILE[6])
async def test_hostile_strings_at_every_entrance(
    world: tuple[httpx.AsyncClient, AssistantHub, SqlStore, Said, Path], text: str
) -> None:
    client, hub, store, said, folder = world
    assistant = hub.get(KEY)

    # Python tools: a result, never an exception.
    for tool, args in (
        ("store_memory", {"content": text, "source_entity": text[:100]}),
        ("add_session_memory", {"memory_type": "fact", "content": text}),
        ("update_entity_observation", {"entity_id": "Eve", "observation": text}),
        ("add_goal", {"description": _nested(100_000)}),
    ):
        result = await assistant.call_tool(tool, args)
        assert isinstance(result.get("success"), bool)

    # HTTP: refused or taken, never a 5xx.
    codes = await _through_http(client, text)
    assert all(code < 500 for code in codes), codes

    # MCP: the SDK's client in process, and raw lines through the stdio screen.
    async with Client(build_server(lambda ctx: assistant)) as mcp:
        called = await mcp.call_tool("add_journal_entry", {"content": text})
        assert called.content
    for line in (
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": text}}),
        text,
        DEEP,
    ):
        assert screen(line).action in ("pass", "drop", "answer")

    # The model: its reply and its tool calls carry the string.
    said.text = text
    assistant.enqueue_event("Tell me something", source_entity="Eve")
    ticked = await client.post(f"{API}/tick")
    assert ticked.status_code == 200, ticked.text
    assert ticked.json().get("status") != "failed", ticked.text

    # An import line carrying it: refused with a TransferError or imported.
    line = json.dumps(
        {
            "kind": "goal",
            "key": "gx",
            "fields": {
                "id": "gx",
                "description": text,
                "priority": "low",
                "status": "active",
                "progress": 0.0,
                "created": "2025-12-06T10:00:00Z",
                "updated": "2025-12-06T10:00:00Z",
                "parent_id": None,
                "subtask_ids": [],
                "auto_generated": False,
            },
        }
    )
    header = {"format": "mindspace-export", "version": 1, "assistant": "x", "schema_version": 1}
    crafted = folder / "crafted.jsonl"
    crafted.write_text(
        "\n".join(
            [
                json.dumps(header),
                line,
                json.dumps({"end": "mindspace-export", "counts": {"goal": 1}}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    with contextlib.suppress(TransferError):  # refused is fine; a crash is not
        import_assistant(store, crafted, key="crafted", replace=True)

    await _readable_everywhere(client, store, folder)
