"""The SQL store: migrations, restarts, isolation between assistants, concurrent writers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from mindspace import Assistant
from mindspace.errors import (
    AssistantNotFoundError,
    ConcurrencyError,
    MigrationError,
    StorageError,
)
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.storage.migrations import MIGRATIONS
from mindspace.storage.tables import metadata
from mindspace.workspace import SystemPrompts

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from mindspace import ManualClock
    from mindspace.testing.assistants import assistant_on
    from mindspace.llm import OfflineLLM
    from mindspace.storage import SqlStore

    async def main() -> None:
        store = SqlStore.from_path(sys.argv[1])
        a = assistant_on(store, "barkeep", llm=OfflineLLM(announce=False), clock=ManualClock())
        await a.call_tool("create_project", {"project_key": "build_tavern", "summary": "Tavern",
                                             "initial_context": "Walls 50%"})
        added = await a.call_tool("add_goal", {"description": "Build a complete tavern"})
        goal = added["goal_id"]
        await a.call_tool("decompose_goal", {"goal_id": goal})
        await a.call_tool("update_goal", {"goal_id": "goal_0_1", "status": "completed"})
        await a.call_tool("add_session_memory", {"memory_type": "fact",
                                                 "content": "Player Alice prefers formal address"})
        await a.call_tool("update_system_prompt", {"new_prompt": "Be concise.", "reasoning": "r"})
        await a.set_user_system_prompt("Stay in character.")
        print("written")

    asyncio.run(main())
    """
)


def test_state_survives_a_restart_in_a_new_process(
    db_path: Path, make_assistant: Callable[..., Assistant]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(db_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "written"

    assistant = make_assistant("barkeep")
    assert [(p.key, p.context) for p in assistant.views.projects().all()] == [
        ("build_tavern", "Walls 50%")
    ]
    goals = assistant.views.goals().all()
    assert goals[0].description == "Build a complete tavern"
    assert len(goals[0].subtask_ids) >= 3
    assert goals[0].progress == round(100 / len(goals[0].subtask_ids), 2)
    assert assistant.views.session_memory().key_facts == ("Player Alice prefers formal address",)
    prompts = assistant._core.read().doc(SystemPrompts)
    assert prompts.assistant_system_prompt == "Be concise."
    assert prompts.user_system_prompt == "Stay in character."
    assert assistant.views.status()["session_metrics"]["total_tool_calls"] == 6


async def test_assistants_in_one_database_are_isolated(
    make_assistant: Callable[..., Assistant],
) -> None:
    alice = make_assistant("alice-helper")
    bob = make_assistant("bob-helper")
    await alice.call_tool("create_project", {"project_key": "garden", "summary": "Plant it"})
    await alice.call_tool("add_goal", {"description": "Water the roses"})
    assert bob.views.projects().all() == []
    assert bob.views.goals().all() == []
    await bob.call_tool("create_project", {"project_key": "garden", "summary": "Bob's own"})
    assert [p.summary for p in alice.views.projects().all()] == ["Plant it"]
    assert [p.summary for p in bob.views.projects().all()] == ["Bob's own"]


async def test_a_second_writer_on_the_same_assistant_sees_the_first_ones_changes(
    make_assistant: Callable[..., Assistant],
) -> None:
    first = make_assistant("barkeep")
    second = make_assistant("barkeep")  # as another process would
    assert second.views.projects().all() == []  # its cache is loaded now
    await first.call_tool("create_project", {"project_key": "cellar", "summary": "Stock it"})
    listed = await second.call_tool("list_projects")
    assert [p["key"] for p in listed["projects"]] == ["cellar"]
    await second.call_tool("add_goal", {"description": "Count the barrels"})
    assert [g.description for g in first.views.goals().all()] == ["Count the barrels"]


def test_a_stale_commit_is_detected_not_overwritten(store: SqlStore) -> None:
    info = store.open_assistant("barkeep", create=True)
    change = Change("doc", "counters", {"name": "counters", "value": {"tick_count": 1}})
    assert store.commit(info.id, info.revision, [change]) == info.revision + 1
    with pytest.raises(ConcurrencyError, match="retry"):
        store.commit(info.id, info.revision, [change])


def test_opening_a_missing_assistant_without_create_says_what_to_do(store: SqlStore) -> None:
    with pytest.raises(AssistantNotFoundError, match="'ghost'"):
        store.open_assistant("ghost", create=False)
    with pytest.raises(ValueError, match="Invalid assistant key"):
        store.open_assistant(" padded ", create=True)


def test_migrations_are_recorded_and_produce_the_declared_schema(db_path: Path) -> None:
    SqlStore.from_path(db_path).close()
    SqlStore.from_path(db_path).close()  # a second open applies nothing again
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.connect() as conn:
        versions = [row[0] for row in conn.execute(text("SELECT version FROM schema_migrations"))]
    assert versions == [m.version for m in MIGRATIONS]
    inspector = inspect(engine)
    for table in metadata.sorted_tables:
        migrated = {c["name"] for c in inspector.get_columns(table.name)}
        assert migrated == {c.name for c in table.columns}, table.name


def test_a_database_from_a_newer_mindspace_is_refused(db_path: Path) -> None:
    SqlStore.from_path(db_path).close()
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO schema_migrations VALUES (999, 'future', '2030-01-01T00:00:00Z')")
        )
    with pytest.raises(MigrationError, match="upgrade mindspace"):
        SqlStore.from_path(db_path)


def test_records_are_json_in_the_file(db_path: Path, store: SqlStore) -> None:
    info = store.open_assistant("barkeep", create=True)
    store.commit(
        info.id,
        info.revision,
        [
            Change(
                "doc", "session_memory", {"name": "session_memory", "value": {"key_facts": ["A"]}}
            )
        ],
    )
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.connect() as conn:
        value = conn.execute(text("SELECT value FROM docs WHERE name='session_memory'")).scalar()
    assert json.loads(value) == {"key_facts": ["A"]}


def test_a_missing_psycopg_names_the_postgres_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    with pytest.raises(
        StorageError, match=r"install the 'postgres' extra \(from a clone: pip install -e"
    ):
        SqlStore("postgresql+psycopg://mindspace@localhost/mindspace")
