"""An assistant moved SQLite -> PostgreSQL -> SQLite through export files loses nothing."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from mindspace import ManualClock, Settings
from mindspace.hosts.cli.demo import run_demo
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.storage.tables import KINDS
from mindspace.testing.assistants import assistant_on
from mindspace.tools import Tool, ToolArgs, ToolCategory, ToolContext, default_registry
from mindspace.transfer import export_assistant, import_assistant


class _Args(ToolArgs):
    command: str


class _Demolish(Tool[_Args]):
    """A DANGEROUS tool, so that the assistant has an approval waiting."""

    name = "demolish"
    description = "Demolish a building."
    category = ToolCategory.DANGEROUS
    args_model = _Args

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        return {"success": True, "output": f"{args.command} is rubble"}


def _rich_assistant(tmp_path: Path) -> str:
    """A SQLite database holding 'barkeep' after the demo, plus an approval and open events."""
    url = f"sqlite:///{tmp_path / 'source.db'}"
    settings = Settings(data_dir=tmp_path, embedder="hashing")
    run_demo(settings, url, "barkeep", Console(file=io.StringIO()))
    store = SqlStore(url)
    try:
        tools = default_registry()
        tools.register(_Demolish())
        assistant = assistant_on(
            store,
            "barkeep",
            llm=OfflineLLM(announce=False),
            settings=settings,
            clock=ManualClock(),
            tools=tools,
        )
        asked = asyncio.run(
            assistant.request_approval("demolish", {"command": "old mill"}, requested_by="op")
        )
        assert asked["status"] == "awaiting_approval"
        # A fact said twice (one memory, two sources) and a replaced one (valid_to).
        for said in ("The cellar door sticks in winter", "The cellar door sticks in winter."):
            stored = asyncio.run(assistant.call_tool("store_memory", {"content": said}))
        assert stored["action"] == "restated"
        with assistant._core.transaction() as unit:
            old = unit.get(Memory, "mem_1")
            assert old is not None
            update = {"valid_to": "2025-12-07T08:00:00Z", "superseded_by": stored["memory_id"]}
            unit.put(old.model_copy(update=update))
        assistant.enqueue_event("Is the cellar open?", source_entity="Mira", location="bar")
        assistant.enqueue_event("A wagon arrives.", type="world", metadata={"cart": 2})
    finally:
        store.close()
    return url


def _everything(url: str, key: str) -> dict[str, list[dict[str, Any]]]:
    store = SqlStore(url)
    try:
        info = store.open_assistant(key, create=False)
        return {kind: store.load(info.id, kind) for kind in KINDS}
    finally:
        store.close()


def _move(url: str, key: str, to_url: str, path: Path, *, as_key: str | None = None) -> None:
    source, target = SqlStore(url), SqlStore(to_url)
    try:
        with path.open("w", encoding="utf-8") as out:
            export_assistant(source, key, out)
        import_assistant(target, path, key=as_key)
    finally:
        source.close()
        target.close()


def test_sqlite_to_postgresql_to_sqlite_keeps_every_record(tmp_path: Path, pg_url: str) -> None:
    source = _rich_assistant(tmp_path)
    before = _everything(source, "barkeep")
    for kind in ("doc", "project", "goal", "journal_entry", "journal_vector", "event"):
        assert before[kind], f"the demo assistant should have {kind!r} records"
    for kind in ("message", "approval", "memory", "memory_links", "entity"):
        assert before[kind], f"the demo assistant should have {kind!r} records"
    assert any(m["embedding"] for m in before["memory"])
    assert any(m["mentions"] == 2 and len(m["sources"]) == 2 for m in before["memory"])
    assert any(m["valid_to"] and m["superseded_by"] for m in before["memory"])
    names = {d["name"] for d in before["doc"]}
    assert names >= {"working_memory", "session_memory", "system_prompts", "sleep_schedule"}

    _move(source, "barkeep", pg_url, tmp_path / "from-sqlite.jsonl")
    on_postgres = _everything(pg_url, "barkeep")
    final = f"sqlite:///{tmp_path / 'final.db'}"
    _move(pg_url, "barkeep", final, tmp_path / "from-postgres.jsonl", as_key="barkeep-back")
    after = _everything(final, "barkeep-back")

    for kind in KINDS:
        assert on_postgres[kind] == before[kind], f"{kind!r} changed on PostgreSQL"
        assert after[kind] == before[kind], f"{kind!r} changed on the way back"
    # The two files agree line for line after the header (which carries the export time).
    first = (tmp_path / "from-sqlite.jsonl").read_text().splitlines()
    second = (tmp_path / "from-postgres.jsonl").read_text().splitlines()
    assert first[1:] == second[1:]
    header = json.loads(first[0])
    assert header["format"] == "mindspace-export"
    assert header["assistant"] == "barkeep"


def test_an_imported_assistant_searches_its_memories_on_postgresql(
    tmp_path: Path, pg_url: str
) -> None:
    source = _rich_assistant(tmp_path)
    _move(source, "barkeep", pg_url, tmp_path / "mind.jsonl")
    store = SqlStore(pg_url)
    try:
        assistant = assistant_on(
            store,
            "barkeep",
            llm=OfflineLLM(announce=False),
            settings=Settings(data_dir=tmp_path, embedder="hashing"),
            clock=ManualClock(),
            create=False,
        )
        found = asyncio.run(assistant.call_tool("recall_memories", {"query": "ale"}))
    finally:
        store.close()
    assert found["success"] is True
    assert found["memories"], found
