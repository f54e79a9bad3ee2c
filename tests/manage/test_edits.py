"""Editing, deleting and forgetting through ``assistant.edits``, each kept in the history.

Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json

import pytest

from mindspace import Assistant
from mindspace.engine.history import Actor, HistoryEntry
from mindspace.errors import InvalidInputError, RecordNotFoundError
from mindspace.journal.records import EntryVector, JournalEntry
from mindspace.limits import ATTRIBUTE_VALUE_CHARS
from mindspace.memory.records import EntityProfile, Memory, MemoryLinks, WorkingMemory
from mindspace.memory.semantic import MemoryState
from mindspace.workspace.status import LoopSnapshot

ADMIN = Actor("user", "admin")


def edits_of(assistant: Assistant) -> list[HistoryEntry]:
    """The recorded direct edits (not the tool calls that filled the assistant), newest first."""
    return [e for e in assistant.views.history(limit=200).entries if e.via is None]


async def recall(assistant: Assistant, query: str) -> list[str]:
    outcome = await assistant.views.search_memories({"query": query, "limit": 10})
    return [m["content"] for m in outcome.result["memories"]]


async def test_an_edited_memory_is_found_by_its_new_words_and_the_history_has_both(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    memory_id = alice["memory_plain"]
    edited = await on_backend.edits.update_memory(
        memory_id, ADMIN, content="The cellar stays dry all year", tags=["cellar"], importance=8
    )

    assert edited.content == "The cellar stays dry all year"
    assert "The cellar stays dry all year" in await recall(on_backend, "dry cellar all year")
    assert on_backend.views.memory_page()["memories"][0]["metadata"]["importance"] == 8
    (change,) = edits_of(on_backend)
    assert (change.actor_kind, change.actor, change.action) == ("user", "admin", "update")
    assert (change.target_kind, change.target_key) == ("memory", memory_id)
    assert change.before is not None
    assert change.after is not None
    assert change.before["content"] == "The cellar floods in spring"
    assert change.after["content"] == "The cellar stays dry all year"
    assert "embedding" not in change.after


async def test_a_deleted_memory_is_gone_from_pages_and_recall_and_noted_for_the_night(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    memory_id = alice["memory_plain"]
    await on_backend.edits.delete_memory(memory_id, Actor("host", "dashboard"))

    shown = [m["id"] for m in on_backend.views.memory_page()["memories"]]
    assert memory_id not in shown
    assert "The cellar floods in spring" not in await recall(on_backend, "cellar floods spring")
    assert memory_id in on_backend._core.read().doc(MemoryState).forgotten
    (change,) = edits_of(on_backend)
    assert (change.action, change.actor_kind, change.after) == ("delete", "host", None)
    with pytest.raises(RecordNotFoundError, match="mem_"):
        await on_backend.edits.delete_memory(memory_id, ADMIN)


async def test_journal_entries_are_edited_and_deleted_with_their_vector(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    entry_id = int(alice["entry_Bob"])
    edited = await on_backend.edits.update_journal_entry(
        entry_id, ADMIN, content="Bob sang badly", importance=2
    )
    assert (edited.content, edited.importance, edited.importance_method) == (
        "Bob sang badly",
        2,
        "manual",
    )
    await on_backend.edits.delete_journal_entry(entry_id, ADMIN)

    unit = on_backend._core.read()
    assert unit.get(JournalEntry, str(entry_id)) is None
    assert unit.get(EntryVector, str(entry_id)) is None
    assert [e.action for e in edits_of(on_backend)] == ["delete", "update"]
    with pytest.raises(InvalidInputError, match="empty"):
        await on_backend.edits.update_journal_entry(int(alice["entry_Alice"]), ADMIN, content=" ")


async def test_goals_are_edited_and_deleted_with_their_subtasks(on_backend: Assistant) -> None:
    root = (await on_backend.call_tool("add_goal", {"description": "Open the inn"}))["goal_id"]
    sub = {"description": "Hire a cook", "parent_id": root}
    child = (await on_backend.call_tool("add_goal", sub))["goal_id"]

    goal = await on_backend.edits.update_goal(child, ADMIN, priority="high", progress=50)
    assert (goal.priority, goal.progress) == ("high", 50)
    with pytest.raises(InvalidInputError, match="priority"):
        await on_backend.edits.update_goal(child, ADMIN, priority="urgent")
    gone = await on_backend.edits.delete_goal(root, ADMIN)

    assert {g.id for g in gone} == {root, child}
    assert on_backend.views.goal_tree()["total"] == 0
    assert [e.action for e in edits_of(on_backend)] == ["delete", "delete", "update"]


async def test_entity_attributes_and_observations_are_edited(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    profile = await on_backend.edits.update_entity(
        "Alice", ADMIN, attributes={"drink": "dark ale"}, remove_observations=[0]
    )
    assert profile.attributes == {"drink": "dark ale"}
    assert profile.observations == ()
    profile = await on_backend.edits.update_entity("Alice", ADMIN, attributes={"drink": None})
    assert profile.attributes == {}
    with pytest.raises(InvalidInputError, match="out of range"):
        await on_backend.edits.update_entity("Alice", ADMIN, remove_observations=[3])
    assert len(edits_of(on_backend)) == 2


async def test_an_attribute_value_is_held_to_the_documented_limit(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    # The same 500 characters the night's consolidation cuts attributes to
    # (docs/configuration.md, "attribute's name 64 and value 500").
    fits = "a" * ATTRIBUTE_VALUE_CHARS
    profile = await on_backend.edits.update_entity("Alice", ADMIN, attributes={"note": fits})
    assert profile.attributes["note"] == fits
    with pytest.raises(InvalidInputError, match=f"the limit is {ATTRIBUTE_VALUE_CHARS}"):
        await on_backend.edits.update_entity("Alice", ADMIN, attributes={"note": fits + "b"})
    stored = on_backend.views.entity("Alice")
    assert stored is not None
    assert stored.attributes["note"] == fits
    assert len(edits_of(on_backend)) == 1


async def test_forget_dry_run_lists_everything_and_writes_nothing(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    revision = on_backend._core.store.revision(on_backend.info.id)
    report = await on_backend.edits.forget("Alice", ADMIN, dry_run=True)

    shown = report.to_dict()
    assert shown["memory_ids"] == [alice["memory_Alice"]]
    assert shown["journal_entry_ids"] == [int(alice["entry_Alice"])]
    assert shown["counts"] == {
        "profile": 1,
        "observations": 1,
        "working_memory": 1,
        "messages": 0,
        "memories": 1,
        "journal_entries": 1,
        "journal_vectors": 1,
        "memory_links": 2,  # Alice's own links and Bob's links to her
        "session_facts": 0,
        "events": 0,
    }
    # The tool calls' history records of her memory, entry and profile lose their words.
    assert shown["redacted"] == {"history": 3}
    assert on_backend._core.store.revision(on_backend.info.id) == revision
    assert edits_of(on_backend) == []
    assert on_backend.views.entity("Alice") is not None


async def test_forget_removes_the_entity_from_every_tier_in_one_commit(
    on_backend: Assistant, alice: dict[str, str]
) -> None:
    revision = on_backend._core.store.revision(on_backend.info.id)
    await on_backend.edits.forget("Alice", ADMIN)

    assert on_backend._core.store.revision(on_backend.info.id) == revision + 1
    unit = on_backend._core.read()
    assert unit.get(EntityProfile, "Alice") is None
    assert "Alice" not in unit.doc(WorkingMemory).conversations
    assert unit.get(Memory, alice["memory_Alice"]) is None
    assert unit.get(MemoryLinks, alice["memory_Alice"]) is None
    bob_links = unit.get(MemoryLinks, alice["memory_Bob"])
    assert bob_links is not None
    assert [link.id for link in bob_links.linked_to] == [alice["memory_plain"]]
    assert unit.get(JournalEntry, alice["entry_Alice"]) is None
    assert unit.get(EntryVector, alice["entry_Alice"]) is None
    assert "Alice" not in str(await recall(on_backend, "Alice dark ale"))
    # Bob is untouched.
    assert unit.get(EntityProfile, "Bob") is not None
    assert unit.get(JournalEntry, alice["entry_Bob"]) is not None
    (change,) = edits_of(on_backend)
    assert (change.action, change.target_kind, change.target_key) == ("forget", "entity", "Alice")
    assert change.before is not None
    assert change.before["memory_ids"] == [alice["memory_Alice"]]
    with pytest.raises(RecordNotFoundError, match="Nothing is known"):
        await on_backend.edits.forget("Alice", ADMIN)


def test_an_actor_needs_a_name() -> None:
    with pytest.raises(InvalidInputError, match="actor"):
        Actor("user", " ")


async def test_tool_writes_are_recorded_with_who_called_and_what_changed(
    on_backend: Assistant,
) -> None:
    observe = {"entity_id": "Carol", "observation": "Carol paid in silver"}
    await on_backend.call_tool("update_entity_observation", observe)
    with on_backend._core.transaction() as unit:
        again = json.dumps({"entity_id": "Carol", "observation": "Carol left early"})
        ok, _ = await on_backend._executor.for_loop(
            "update_entity_observation", again, unit, LoopSnapshot()
        )
    assert ok
    await on_backend.call_tool("get_system_status", {})  # reads only: nothing recorded

    page = on_backend.views.history()
    assert page.total == 2
    update, create = page.entries
    assert (create.action, create.actor_kind, create.via) == (
        "create",
        "host",
        "tool:update_entity_observation",
    )
    assert create.before is None
    assert (update.action, update.actor_kind, update.actor) == ("update", "model", "barkeep")
    assert update.before is not None
    assert update.after is not None
    assert len(update.before["observations"]) == 1
    assert len(update.after["observations"]) == 2
