"""The read models show what the tools show, and reading them never writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ManualClock
from mindspace.engine.approvals import request_approval
from mindspace.journal.records import JournalEntry
from mindspace.journal.search import JournalFilter

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


@pytest.fixture
async def lived_in(assistant: Assistant, clock: ManualClock) -> Assistant:
    """An assistant with goals, a project, journal entries, memories, an event, an approval."""
    parent = (await assistant.call_tool("add_goal", {"description": "Open the inn"}))["goal_id"]
    await assistant.call_tool("add_goal", {"description": "Hire a cook", "parent_id": parent})
    await assistant.call_tool("create_project", {"project_key": "cellar", "summary": "Restock"})
    await assistant.call_tool("create_project", {"project_key": "garden", "summary": "Plant it"})
    for text in ("A sword was forged", "Alice paid for the sword", "Bob sang all night"):
        await assistant.call_tool("add_journal_entry", {"content": text})
        clock.advance(minutes=1)
    await assistant.call_tool("store_memory", {"content": "Alice likes dark ale"})
    await assistant.call_tool("store_memory", {"content": "The cellar floods in spring"})
    assistant.enqueue_event("A room, please", source_entity="Alice")
    with assistant._core.transaction() as unit:
        request_approval(unit, assistant.clock, "demolish", {"command": "old mill"})
    return assistant


def _revision(assistant: Assistant) -> int:
    return assistant._core.store.revision(assistant.info.id)


async def test_status_is_what_get_system_status_shows_but_the_call_it_counts(
    lived_in: Assistant,
) -> None:
    told = await lived_in.call_tool("get_system_status", {})
    shown = lived_in.views.status()

    # The tool saw the metrics before its own call was counted; the view sees it counted.
    told_metrics, shown_metrics = told.pop("session_metrics"), shown.pop("session_metrics")
    assert shown_metrics["total_tool_calls"] == told_metrics["total_tool_calls"] + 1
    assert shown_metrics["successful_calls"] == told_metrics["successful_calls"] + 1
    assert shown_metrics["failed_calls"] == told_metrics["failed_calls"]
    # The view adds the night's work left: here the journal entries waiting for a night.
    entries = [e for e in lived_in._core.read().all(JournalEntry) if not e.is_synthesis]
    backlog = shown.pop("night_backlog")
    assert backlog["unconsolidated"] == sum(1 for e in entries if not e.consolidated) > 0
    assert backlog["unscored"] == sum(1 for e in entries if e.importance_method == "heuristic")
    assert shown == told


async def test_projects_view_names_the_projects_list_projects_names(lived_in: Assistant) -> None:
    told = await lived_in.call_tool("list_projects", {})
    shown = lived_in.views.projects_view()

    def brief(projects: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(p["key"], p["summary"], p["status"]) for p in projects]

    assert shown["active"] == told["active"] == "cellar"  # the first one created
    assert brief(shown["projects"]) == brief(told["projects"])
    assert [p.key for p in lived_in.views.projects().all()] == ["cellar", "garden"]


async def test_a_journal_search_finds_what_the_search_journal_tool_finds(
    lived_in: Assistant,
) -> None:
    told = await lived_in.call_tool("search_journal", {"query": "sword"})
    found = await lived_in.views.search_journal("sword", JournalFilter())

    assert [e.id for e in found.entries] == [r["id"] for r in told["results"]]
    assert len(found.entries) == 2
    assert found.total_matches == told["total_matches"]
    assert found.mode == told["mode"]


async def test_search_memories_is_recall_memories_without_storing_or_counting(
    lived_in: Assistant, stored: Snapshot
) -> None:
    before, revision = stored(), _revision(lived_in)
    metrics = lived_in.views.status()["session_metrics"]

    outcome = await lived_in.views.search_memories({"query": "dark ale"})

    assert outcome.ok
    assert "Alice likes dark ale" in [m["content"] for m in outcome.result["memories"]]
    assert stored() == before
    assert _revision(lived_in) == revision
    assert lived_in.views.status()["session_metrics"] == metrics
    told = await lived_in.call_tool("recall_memories", {"query": "dark ale"})
    assert told == outcome.result


async def test_the_goal_tree_nests_the_goals_the_tools_added(lived_in: Assistant) -> None:
    tree = lived_in.views.goal_tree()
    goals = {g.id: g for g in lived_in.views.goals().all()}

    assert tree["total"] == len(goals) == 2
    [root] = tree["goals"]
    assert root["description"] == "Open the inn"
    assert [s["description"] for s in root["subtasks"]] == ["Hire a cook"]
    assert tree["counts"]["active"] == 2


async def test_reading_every_view_changes_nothing_stored(
    lived_in: Assistant, stored: Snapshot
) -> None:
    before, revision = stored(), _revision(lived_in)
    metrics = lived_in.views.status()["session_metrics"]
    views = lived_in.views
    [event] = views.open_events()
    [approval] = views.pending_approvals()

    assert views.mode().mode == "awake"
    assert views.schedule().enabled is False
    assert views.tick_rate() > 0
    assert views.mode_view()
    assert views.summary()["key"] == "barkeep"
    assert views.event(event.id) == event
    assert views.approval(approval.id) == approval
    assert views.user_system_prompt() == ""
    assert views.session_memory() is not None
    assert len(views.journal_entries()) == 3
    assert views.journal_page(JournalFilter(), query="sword")["total"] == 2
    assert views.reflection_state() is not None
    assert views.memory_listing().total == 2
    assert views.memory_page(limit=1)["total"] == 2
    assert views.memory_graph()
    assert views.entities_view()["success"] is True
    assert views.working_memory() is not None

    assert stored() == before
    assert _revision(lived_in) == revision
    assert views.status()["session_metrics"] == metrics
