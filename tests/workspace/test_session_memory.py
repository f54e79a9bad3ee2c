"""Session memory and persona protection: spec 000 §3 and data flow 001 §3."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant
from mindspace.workspace import PERSONA_SUGGESTION, PersonaGuard

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


async def test_rejected_self_reference_then_accepted_retry(
    assistant: Assistant, stored: Snapshot
) -> None:
    before = stored()
    rejected = await assistant.call_tool(
        "add_session_memory", {"memory_type": "fact", "content": "I helped Alice"}
    )
    assert rejected == {
        "success": False,
        "error": "Content appears to reference assistant actions or identity",
        "suggestion": PERSONA_SUGGESTION,
        "rejected_content": "I helped Alice",
        "matched": "I helped",
    }
    assert stored() == before

    accepted = await assistant.call_tool(
        "add_session_memory",
        {"memory_type": "fact", "content": "Player Alice completed the intro quest"},
    )
    assert accepted == {
        "success": True,
        "memory_type": "fact",
        "added": "Player Alice completed the intro quest",
        "total_facts": 1,
        "total_patterns": 0,
    }
    assert assistant.views.session_memory().key_facts == ("Player Alice completed the intro quest",)


@pytest.mark.parametrize(
    "content",
    [
        "I helped the player",
        "I should be more formal",
        "The assistant suggested a shortcut",
        "i did the dishes",
        "My behavior was too blunt",
        "Alice thanked me",
    ],
)
def test_the_guard_rejects_the_spec_self_references(content: str) -> None:
    assert not PersonaGuard().is_clean(content)


@pytest.mark.parametrize(
    "content",
    [
        "Player Alice completed the quest",
        "The tavern has 5 rooms",
        "Players prefer concise responses",
        "Players tend to explore before asking for help",
        "Player Alice prefers formal address",
    ],
)
def test_the_guard_accepts_world_facts(content: str) -> None:
    assert PersonaGuard().is_clean(content)


def test_the_assistant_own_name_counts_as_self_reference() -> None:
    guard = PersonaGuard(self_names=["Barkeep"])
    assert not guard.is_clean("Barkeep poured Alice a drink")
    assert guard.is_clean("Alice ordered a drink")


async def test_patterns_and_duplicates(assistant: Assistant) -> None:
    first = await assistant.call_tool(
        "add_session_memory",
        {"memory_type": "pattern", "content": "Players explore before asking for help"},
    )
    assert first["total_patterns"] == 1
    again = await assistant.call_tool(
        "add_session_memory",
        {"memory_type": "pattern", "content": "players explore before asking for help"},
    )
    assert again["success"] is True
    assert again["duplicate"] is True
    assert again["total_patterns"] == 1


async def test_compaction_from_8_facts_and_4_patterns_to_2_and_1_keeps_completed_tasks(
    assistant: Assistant,
) -> None:
    for i in range(8):
        await assistant.call_tool(
            "add_session_memory", {"memory_type": "fact", "content": f"Player fact number {i}"}
        )
    for i in range(4):
        await assistant.call_tool(
            "add_session_memory", {"memory_type": "pattern", "content": f"Players pattern {i}"}
        )
    goal = (await assistant.call_tool("add_goal", {"description": "Greet Alice"}))["goal_id"]
    await assistant.call_tool("update_goal", {"goal_id": goal, "status": "completed"})

    result = await assistant.call_tool(
        "compact_session_memory",
        {
            "new_facts": ["Alice is level 5 warrior", "Server has 10 active players"],
            "new_patterns": ["Players explore before asking for help"],
            "summary": "Consolidated 8 facts about players into 2 key facts",
        },
    )

    assert result == {
        "success": True,
        "before": {"facts": 8, "patterns": 4},
        "after": {"facts": 2, "patterns": 1},
        "summary": "Consolidated 8 facts about players into 2 key facts",
        "completed_tasks_kept": 1,
    }
    memory = assistant.views.session_memory()
    assert memory.key_facts == ("Alice is level 5 warrior", "Server has 10 active players")
    assert memory.learned_patterns == ("Players explore before asking for help",)
    assert [t.description for t in memory.completed_tasks] == ["Greet Alice"]
    assert memory.last_compacted == "2025-12-06T10:00:00Z"


async def test_a_compaction_with_one_bad_item_changes_nothing(
    assistant: Assistant, stored: Snapshot
) -> None:
    await assistant.call_tool(
        "add_session_memory",
        {"memory_type": "fact", "content": "The north gate closes at midnight"},
    )
    before = stored()
    result = await assistant.call_tool(
        "compact_session_memory",
        {
            "new_facts": ["Alice is level 5", "I told Bob about the gate"],
            "new_patterns": [],
            "summary": "merge",
        },
    )
    assert result["success"] is False
    assert result["rejected_content"] == "I told Bob about the gate"
    assert stored() == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"memory_type": "fact", "content": ""}, "'content' is empty"),
        ({"memory_type": "fact", "content": "   "}, "'content' is empty"),
        ({"memory_type": "fact", "content": "a" * 100_000}, "the limit is 1,000"),
        ({"memory_type": "opinion", "content": "Alice likes ale"}, "'fact' or 'pattern'"),
        ({"memory_type": "fact", "content": ["Alice likes ale"]}, "valid string"),
        ({"memory_type": "fact"}, "Field required"),
    ],
)
async def test_bad_session_memory_is_refused_and_changes_nothing(
    assistant: Assistant, stored: Snapshot, args: dict[str, Any], expected: str
) -> None:
    before = stored()
    result = await assistant.call_tool("add_session_memory", args)
    assert result["success"] is False
    assert expected in result["error"]
    assert result["suggestion"]
    assert stored() == before


async def test_compaction_needs_lists(assistant: Assistant, stored: Snapshot) -> None:
    before = stored()
    result = await assistant.call_tool(
        "compact_session_memory",
        {"new_facts": "Alice is level 5", "new_patterns": [], "summary": "x"},
    )
    assert result["success"] is False
    assert "new_facts: Input should be a valid list" in result["error"]
    assert stored() == before
