"""Goals through call_tool: spec 000 §2 and data flow 001 §2."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ScriptedLLM
from mindspace.workspace import Counters

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]

SPEC_SUBTASKS = [
    "Design layout",
    "Build structure",
    "Add furniture",
    "Create bartender",
    "Write descriptions",
]


@pytest.fixture
def at_tick_42(make_assistant: Callable[..., Assistant], scripted: ScriptedLLM) -> Assistant:
    """An assistant whose tick counter stands at 42, as in the spec's examples."""
    assistant = make_assistant(llm=scripted)
    with assistant._core.transaction() as unit:
        unit.put_doc(Counters(tick_count=42))
    return assistant


async def test_goal_ids_follow_the_tick_and_index_format(at_tick_42: Assistant) -> None:
    first = await at_tick_42.call_tool(
        "add_goal", {"description": "Build a complete tavern", "priority": "high"}
    )
    second = await at_tick_42.call_tool("add_goal", {"description": "Hire a cook"})
    assert first["goal_id"] == "goal_42_0"
    assert second["goal_id"] == "goal_42_1"
    goal = first["goal"]
    assert goal["priority"] == "high"
    assert goal["status"] == "active"
    assert goal["progress"] == 0
    assert goal["parent_id"] is None
    assert goal["subtask_ids"] == []
    assert goal["auto_generated"] is False
    assert second["goal"]["priority"] == "medium"


async def test_decompose_then_rollup_reproduces_the_spec_40_percent_example(
    at_tick_42: Assistant, scripted: ScriptedLLM
) -> None:
    await at_tick_42.call_tool(
        "add_goal", {"description": "Build a complete tavern", "priority": "high"}
    )
    scripted.enqueue(json.dumps(SPEC_SUBTASKS))

    decomposed = await at_tick_42.call_tool("decompose_goal", {"goal_id": "goal_42_0"})

    assert decomposed["subtasks_created"] == 5
    assert decomposed["structured"] == "parsed"
    assert decomposed["subtasks"] == [
        {"id": f"goal_42_{i + 1}", "description": text} for i, text in enumerate(SPEC_SUBTASKS)
    ]
    prompt = scripted.history[0].last_user_text
    assert "Break down this goal into 3-7 actionable subtasks" in prompt
    assert "Goal: Build a complete tavern" in prompt

    for goal_id in ("goal_42_1", "goal_42_2"):
        updated = await at_tick_42.call_tool(
            "update_goal", {"goal_id": goal_id, "status": "completed", "progress": 100}
        )
        assert updated["message"] == "Goal updated"

    goals = {g.id: g for g in at_tick_42.views.goals().all()}
    parent = goals["goal_42_0"]
    assert parent.progress == 40  # (100 + 100 + 0 + 0 + 0) / 5
    assert parent.status == "active"
    assert parent.subtask_ids == tuple(f"goal_42_{i}" for i in range(1, 6))
    assert all(goals[f"goal_42_{i}"].auto_generated for i in range(1, 6))
    assert all(goals[f"goal_42_{i}"].priority == "high" for i in range(1, 6))


async def test_rollup_reaches_every_ancestor_and_auto_completes(assistant: Assistant) -> None:
    root = (await assistant.call_tool("add_goal", {"description": "Open the tavern"}))["goal_id"]
    mid = (
        await assistant.call_tool("add_goal", {"description": "Fit the kitchen", "parent_id": root})
    )["goal_id"]
    other = (
        await assistant.call_tool("add_goal", {"description": "Hire staff", "parent_id": root})
    )["goal_id"]
    leaf_a = (
        await assistant.call_tool("add_goal", {"description": "Buy an oven", "parent_id": mid})
    )["goal_id"]
    leaf_b = (await assistant.call_tool("add_goal", {"description": "Buy pans", "parent_id": mid}))[
        "goal_id"
    ]

    result = await assistant.call_tool("update_goal", {"goal_id": leaf_a, "progress": 50})
    assert [r["goal_id"] for r in result["rolled_up"]] == [mid, root]
    goals = {g.id: g for g in assistant.views.goals().all()}
    assert goals[mid].progress == 25  # (50 + 0) / 2
    assert goals[root].progress == 12.5  # (25 + 0) / 2, not only the parent

    await assistant.call_tool("update_goal", {"goal_id": leaf_a, "status": "completed"})
    finished = await assistant.call_tool("update_goal", {"goal_id": leaf_b, "status": "completed"})
    assert finished["completed"] == [leaf_b, mid]
    goals = {g.id: g for g in assistant.views.goals().all()}
    assert goals[mid].status == "completed"
    assert goals[mid].progress == 100
    assert goals[root].status == "active"
    assert goals[root].progress == 50

    last = await assistant.call_tool("update_goal", {"goal_id": other, "status": "completed"})
    assert last["completed"] == [other, root]
    assert {g.id: g.status for g in assistant.views.goals().all()}[root] == "completed"
    tasks = [t.description for t in assistant.views.session_memory().completed_tasks]
    assert tasks == ["Buy an oven", "Buy pans", "Fit the kitchen", "Hire staff", "Open the tavern"]

    reopened = await assistant.call_tool("update_goal", {"goal_id": leaf_b, "status": "active"})
    assert [r["status"] for r in reopened["rolled_up"]] == ["active", "active"]


async def test_offline_model_decomposes_into_three_to_seven_subtasks(
    assistant: Assistant,
) -> None:
    goal_id = (await assistant.call_tool("add_goal", {"description": "Build a complete tavern"}))[
        "goal_id"
    ]
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is True
    assert 3 <= result["subtasks_created"] <= 7
    assert result["structured"] == "parsed"  # the offline model answers in the exact form
    assert all("tavern" in s["description"] for s in result["subtasks"])


async def test_a_parent_cannot_be_completed_or_set_while_subtasks_decide(
    assistant: Assistant, stored: Snapshot
) -> None:
    root = (await assistant.call_tool("add_goal", {"description": "Open the tavern"}))["goal_id"]
    child = (
        await assistant.call_tool("add_goal", {"description": "Hire staff", "parent_id": root})
    )["goal_id"]
    before = stored()
    early = await assistant.call_tool("update_goal", {"goal_id": root, "status": "completed"})
    assert early["success"] is False
    assert early["incomplete_subtask_ids"] == [child]
    progress = await assistant.call_tool("update_goal", {"goal_id": root, "progress": 80})
    assert progress["success"] is False
    assert child in progress["suggestion"]
    assert stored() == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"goal_id": "goal_9_9", "progress": 10}, "Goal 'goal_9_9' does not exist"),
        ({"goal_id": "GOAL", "progress": 101}, "less than or equal to 100"),
        ({"goal_id": "GOAL", "progress": -1}, "greater than or equal to 0"),
        ({"goal_id": "GOAL", "status": "done"}, "'active', 'completed' or 'abandoned'"),
        ({"goal_id": "GOAL", "progress": "50"}, "valid number"),
        ({"goal_id": "GOAL"}, "needs 'status' or 'progress'"),
        ({"goal_id": "GOAL", "status": "completed", "progress": 50}, "progress 100"),
    ],
)
async def test_bad_goal_updates_are_refused_and_change_nothing(
    assistant: Assistant, stored: Snapshot, args: dict[str, Any], expected: str
) -> None:
    goal_id = (await assistant.call_tool("add_goal", {"description": "Fix the gate"}))["goal_id"]
    args = {k: (goal_id if v == "GOAL" else v) for k, v in args.items()}
    before = stored()
    result = await assistant.call_tool("update_goal", args)
    assert result["success"] is False
    assert expected in result["error"]
    assert result["suggestion"]
    assert stored() == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"description": "Fix the gate", "priority": "urgent"}, "'high', 'medium' or 'low'"),
        ({"description": ""}, "'description' is empty"),
        ({"description": "x" * 100_000}, "100,000 characters"),
        ({"description": 123}, "valid string"),
        ({"description": "Fix", "parent_id": "goal_0_7"}, "Goal 'goal_0_7' does not exist"),
        ({"description": "Fix", "owner": "me"}, "Extra inputs are not permitted"),
    ],
)
async def test_bad_new_goals_are_refused_and_change_nothing(
    assistant: Assistant, stored: Snapshot, args: dict[str, Any], expected: str
) -> None:
    before = stored()
    result = await assistant.call_tool("add_goal", args)
    assert result["success"] is False
    assert expected in result["error"]
    assert stored() == before


async def test_decomposing_a_completed_goal_is_refused(
    assistant: Assistant, stored: Snapshot
) -> None:
    goal_id = (await assistant.call_tool("add_goal", {"description": "Fix the gate"}))["goal_id"]
    await assistant.call_tool("update_goal", {"goal_id": goal_id, "status": "completed"})
    before = stored()
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is False
    assert result["error"] == f"Goal {goal_id!r} is completed; only active goals can be decomposed"
    assert stored() == before


async def test_an_unusable_decomposition_fails_cleanly_and_adds_no_subtasks(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, stored: Snapshot
) -> None:
    assistant = make_assistant(llm=scripted)
    goal_id = (await assistant.call_tool("add_goal", {"description": "Fix the gate"}))["goal_id"]
    before = stored()
    scripted.enqueue('["Only one step", "and another"]')
    scripted.enqueue("1. Only one step\n2. and another")
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is False
    assert result["error"].startswith(
        f"The language model gave no usable subtasks for goal {goal_id!r} (after one repair)"
    )
    assert "no JSON value" in result["error"]  # why the repair answer was refused
    assert "add_goal(parent_id=...)" in result["suggestion"]
    assert result["structured"] == "fallback"
    assert result["llm_replies"] == [
        '["Only one step", "and another"]',
        "1. Only one step\n2. and another",
    ]
    # The repair request quoted the count that was wrong.
    assert "give 3 to 7 subtasks, not 2" in scripted.history[1].last_user_text
    assert stored() == before


async def test_a_bulleted_decomposition_is_repaired_once_into_json(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    goal_id = (await assistant.call_tool("add_goal", {"description": "Throw a feast"}))["goal_id"]
    scripted.enqueue(
        "Sure! Here is the plan:\n" + "\n".join(f"{i}. Step {i}" for i in range(1, 10))
    )
    scripted.enqueue(json.dumps([f"Step {i}" for i in range(1, 6)]))
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is True
    assert result["structured"] == "repaired"
    assert [s["description"] for s in result["subtasks"]] == [f"Step {i}" for i in range(1, 6)]
    assert len(scripted.history) == 2


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps([f"Step {i}" for i in range(1, 9)]),  # eight: more than 7
        json.dumps(["Plan", "plan", "Build"]),  # a repeat
        json.dumps(["Plan", "  ", "Build", "Test"]),  # a blank
        json.dumps([{"description": "Plan"}, "Build", "Test"]),  # not a string
    ],
)
async def test_decompositions_outside_the_exact_form_are_refused(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, reply: str
) -> None:
    assistant = make_assistant(llm=scripted)
    goal_id = (await assistant.call_tool("add_goal", {"description": "Fix the gate"}))["goal_id"]
    scripted.enqueue(reply)
    scripted.enqueue(reply)
    result = await assistant.call_tool("decompose_goal", {"goal_id": goal_id})
    assert result["success"] is False
    assert result["structured"] == "fallback"
    assert [g.id for g in assistant.views.goals().all()] == [goal_id]
