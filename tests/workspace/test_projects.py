"""Projects through call_tool: spec 000 §1 and data flow 001 §1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindspace import Assistant, ManualClock

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


async def _two_projects(assistant: Assistant) -> None:
    assert (
        await assistant.call_tool(
            "create_project",
            {
                "project_key": "build_tavern",
                "summary": "Construct a tavern in the north district",
                "initial_context": "Walls 50%...",
            },
        )
    )["success"]
    assert (
        await assistant.call_tool(
            "create_project",
            {
                "project_key": "quest_design",
                "summary": "Design main quest line",
                "initial_context": "Act 1 complete",
            },
        )
    )["success"]


def _slots(assistant: Assistant) -> dict[str, tuple[str, str]]:
    return {p.key: (p.status, p.context) for p in assistant.views.projects().all()}


async def test_swap_matches_the_spec_before_and_after_table(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _two_projects(assistant)
    # BEFORE: build_tavern active with its context; quest_design paused.
    assert assistant.views.projects().active_key() == "build_tavern"
    assert _slots(assistant) == {
        "build_tavern": ("active", "Walls 50%..."),
        "quest_design": ("paused", "Act 1 complete"),
    }
    clock.advance(hours=4)

    result = await assistant.call_tool(
        "swap_project",
        {
            "project_key": "quest_design",
            "current_project_update": "Walls 60% done",
            "reasoning": "Player asked about quests",
        },
    )

    assert result == {
        "success": True,
        "old_project": "build_tavern",
        "new_project": "quest_design",
        "new_project_summary": "Design main quest line",
        "new_project_context": "Act 1 complete",
    }
    # AFTER: quest_design active (context restored), build_tavern paused with the update.
    assert assistant.views.projects().active_key() == "quest_design"
    assert _slots(assistant) == {
        "build_tavern": ("paused", "Walls 60% done"),
        "quest_design": ("active", "Act 1 complete"),
    }
    times = {p.key: p.last_active for p in assistant.views.projects().all()}
    assert times == {"build_tavern": "2025-12-06T14:00:00Z", "quest_design": "2025-12-06T14:00:00Z"}


async def test_swap_without_an_update_pauses_and_keeps_the_old_context(
    assistant: Assistant,
) -> None:
    await _two_projects(assistant)
    await assistant.call_tool("swap_project", {"project_key": "quest_design"})
    assert _slots(assistant)["build_tavern"] == ("paused", "Walls 50%...")


async def test_list_projects_shows_summaries_status_and_the_active_one(
    assistant: Assistant,
) -> None:
    empty = await assistant.call_tool("list_projects")
    assert empty == {"success": True, "active": None, "count": 0, "projects": []}
    await _two_projects(assistant)
    listed = await assistant.call_tool("list_projects")
    assert listed["active"] == "build_tavern"
    assert [(p["key"], p["status"], p["summary"]) for p in listed["projects"]] == [
        ("build_tavern", "active", "Construct a tavern in the north district"),
        ("quest_design", "paused", "Design main quest line"),
    ]


async def test_update_project_saves_context_without_swapping(assistant: Assistant) -> None:
    await _two_projects(assistant)
    result = await assistant.call_tool(
        "update_project", {"context_update": "Requirements gathered. Player wants 3 rooms"}
    )
    assert result["success"]
    assert result["project_key"] == "build_tavern"
    assert _slots(assistant)["build_tavern"] == (
        "active",
        "Requirements gathered. Player wants 3 rooms",
    )
    assert assistant.views.projects().active_key() == "build_tavern"


async def test_completing_the_active_project_unloads_it(assistant: Assistant) -> None:
    await _two_projects(assistant)
    done = await assistant.call_tool(
        "update_project", {"context_update": "Tavern open", "completed": True}
    )
    assert done["status"] == "completed"
    assert assistant.views.projects().active_key() is None
    again = await assistant.call_tool("update_project", {"context_update": "more"})
    assert again["success"] is False
    assert "create_project" in again["suggestion"]


async def test_swap_to_an_unknown_project_lists_the_available_ones_and_changes_nothing(
    assistant: Assistant, stored: Snapshot
) -> None:
    await _two_projects(assistant)
    before = stored()
    result = await assistant.call_tool(
        "swap_project", {"project_key": "dragon_hunt", "current_project_update": "Walls 70%"}
    )
    assert result["success"] is False
    assert result["error"] == "Project 'dragon_hunt' does not exist"
    assert result["available_projects"] == ["build_tavern", "quest_design"]
    assert result["suggestion"]
    assert stored() == before


async def test_a_duplicate_project_key_is_refused_and_changes_nothing(
    assistant: Assistant, stored: Snapshot
) -> None:
    await _two_projects(assistant)
    before = stored()
    result = await assistant.call_tool(
        "create_project", {"project_key": "build_tavern", "summary": "Another tavern"}
    )
    assert result["success"] is False
    assert "already exists" in result["error"]
    assert "swap_project" in result["suggestion"]
    assert stored() == before


async def test_malformed_keys_and_oversized_text_are_refused(
    assistant: Assistant, stored: Snapshot
) -> None:
    before = stored()
    bad_key = await assistant.call_tool(
        "create_project", {"project_key": "has spaces", "summary": "x"}
    )
    empty = await assistant.call_tool("create_project", {"project_key": "ok", "summary": "  "})
    huge = await assistant.call_tool(
        "create_project",
        {"project_key": "ok", "summary": "fine", "initial_context": "x" * 100_000},
    )
    for result in (bad_key, empty, huge):
        assert result["success"] is False
        assert result["suggestion"]
    assert "'summary' is empty" in empty["error"]
    assert "100,000 characters" in huge["error"]
    assert stored() == before


async def test_swap_to_the_active_project_saves_the_update_and_keeps_it_active(
    assistant: Assistant, clock: ManualClock
) -> None:
    # Spec 001's steps with old == target: the update is saved, the project stays active.
    await _two_projects(assistant)
    clock.advance(hours=1)
    result = await assistant.call_tool(
        "swap_project", {"project_key": "build_tavern", "current_project_update": "Roof on"}
    )
    assert result == {
        "success": True,
        "old_project": "build_tavern",
        "new_project": "build_tavern",
        "new_project_summary": "Construct a tavern in the north district",
        "new_project_context": "Roof on",
    }
    assert _slots(assistant) == {
        "build_tavern": ("active", "Roof on"),
        "quest_design": ("paused", "Act 1 complete"),
    }
    assert assistant.views.projects().active_key() == "build_tavern"
