"""The tool framework: lookup, validation, categories, schemas, caching, atomicity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ManualClock
from mindspace.errors import ToolExecutionError
from mindspace.tools import Tool, ToolArgs, ToolCategory, ToolContext, default_registry

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]

SPEC_CATEGORIES = {
    "create_project": "SAFE_CHAIN",
    "list_projects": "SAFE_CHAIN",
    "swap_project": "SAFE_CHAIN",
    "update_project": "SAFE_CHAIN",
    "add_goal": "SAFE_CHAIN",
    "update_goal": "SAFE_CHAIN",
    "decompose_goal": "ASYNC_REQUIRED",
    "add_session_memory": "SAFE_CHAIN",
    "compact_session_memory": "SAFE_CHAIN",
    "get_system_status": "SAFE_CHAIN",
    "update_system_prompt": "SAFE_CHAIN",
}


def test_every_spec_tool_is_registered_with_its_category() -> None:
    registry = default_registry()
    for name, category in SPEC_CATEGORIES.items():
        assert registry.get(name).category == category


def test_schemas_are_what_the_llm_sees() -> None:
    schema = default_registry().get("update_goal").schema()
    function = schema["function"]
    assert schema["type"] == "function"
    assert function["name"] == "update_goal"
    params = function["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["goal_id"]
    assert params["additionalProperties"] is False
    assert params["properties"]["progress"]["anyOf"][0] == {
        "maximum": 100,
        "minimum": 0,
        "type": "number",
    }
    assert params["properties"]["status"]["anyOf"][0]["enum"] == [
        "active",
        "completed",
        "abandoned",
    ]


async def test_an_unknown_tool_lists_the_closest_names(assistant: Assistant) -> None:
    result = await assistant.call_tool("add_gaol", {"description": "x"})
    assert result["success"] is False
    assert result["error"] == "Unknown tool 'add_gaol'"
    assert result["closest_tools"][0] == "add_goal"
    assert "add_goal" in result["suggestion"]
    assert "list_projects" in result["available_tools"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"description": ', "not valid JSON"),
        ("[1, 2]", "must be a JSON object, not list"),
        ('"Fix the gate"', "must be a JSON object, not str"),
        ({"description": 5}, "description: Input should be a valid string (got 5)"),
        ({"description": None}, "description: Input should be a valid string"),
        ({"description": "x", "priority": 1}, "priority: Input should be"),
    ],
)
async def test_arguments_of_the_wrong_json_type_come_back_in_the_error_shape(
    assistant: Assistant, stored: Snapshot, raw: Any, expected: str
) -> None:
    before = stored()
    result = await assistant.call_tool("add_goal", raw)
    assert result["success"] is False
    assert expected in result["error"]
    assert "description (string, required)" in result["suggestion"]
    assert stored() == before


async def test_list_projects_is_cached_until_projects_change(
    assistant: Assistant, clock: ManualClock
) -> None:
    first = await assistant.run_tool("list_projects")
    second = await assistant.run_tool("list_projects")
    assert not first.cached
    assert second.cached
    assert second.result == first.result

    await assistant.call_tool("add_goal", {"description": "Unrelated state"})
    assert (await assistant.run_tool("list_projects")).cached

    await assistant.call_tool("create_project", {"project_key": "cellar", "summary": "Stock it"})
    fresh = await assistant.run_tool("list_projects")
    assert not fresh.cached
    assert fresh.result["count"] == 1


async def test_list_projects_cache_expires_with_its_ttl(
    assistant: Assistant, clock: ManualClock
) -> None:
    await assistant.run_tool("list_projects")
    clock.advance(seconds=59)
    assert (await assistant.run_tool("list_projects")).cached
    clock.advance(seconds=2)
    assert not (await assistant.run_tool("list_projects")).cached


async def test_a_swap_invalidates_the_cached_list(assistant: Assistant) -> None:
    await assistant.call_tool("create_project", {"project_key": "a", "summary": "A"})
    await assistant.call_tool("create_project", {"project_key": "b", "summary": "B"})
    assert (await assistant.call_tool("list_projects"))["active"] == "a"
    await assistant.call_tool("swap_project", {"project_key": "b"})
    assert (await assistant.call_tool("list_projects"))["active"] == "b"


class _Args(ToolArgs):
    description: str


class HalfwayCrash(Tool[_Args]):
    """A user-written tool that writes, then hits a bug."""

    name = "halfway_crash"
    description = "Adds a goal, then crashes."
    category = ToolCategory.SAFE_CHAIN
    args_model = _Args

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        ctx.goals.add(args.description)
        raise RuntimeError("bug after the first write")


class HalfwayFailure(Tool[_Args]):
    """A user-written tool that writes, then reports failure."""

    name = "halfway_failure"
    description = "Adds a goal, then reports failure."
    category = ToolCategory.SAFE_CHAIN
    args_model = _Args

    async def execute(self, ctx: ToolContext, args: _Args) -> dict[str, Any]:
        ctx.goals.add(args.description)
        return {"success": False, "error": "could not finish"}


async def test_a_failing_tool_leaves_no_partial_write(
    make_assistant: Callable[..., Assistant], stored: Snapshot
) -> None:
    registry = default_registry()
    registry.register(HalfwayCrash())
    registry.register(HalfwayFailure())
    assistant = make_assistant(tools=registry)
    before = stored()

    with pytest.raises(ToolExecutionError, match="halfway_crash") as caught:
        await assistant.call_tool("halfway_crash", {"description": "Ghost goal"})
    assert isinstance(caught.value.__cause__, RuntimeError)
    failed = await assistant.call_tool("halfway_failure", {"description": "Ghost goal"})
    assert failed == {"success": False, "error": "could not finish"}

    assert stored() == before
    assert assistant.views.goals().all() == []
    assert assistant.views.status()["session_metrics"]["failed_calls"] == 2


def test_registering_two_tools_with_one_name_is_refused() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(default_registry().get("noop"))


async def test_the_cross_system_flow_of_the_spec(assistant: Assistant) -> None:
    """Data flow 001 §4: a player asks for help building a tavern."""
    assert (await assistant.call_tool("list_projects"))["active"] is None
    created = await assistant.call_tool(
        "create_project",
        {
            "project_key": "player_tavern_build",
            "summary": "Help player build a tavern",
            "initial_context": "Player requested help. Location: north district...",
        },
    )
    assert created["active"] is True
    goal_id = (
        await assistant.call_tool(
            "add_goal", {"description": "Complete player's tavern request", "priority": "high"}
        )
    )["goal_id"]
    subtasks = (await assistant.call_tool("decompose_goal", {"goal_id": goal_id}))["subtasks"]
    progressed = await assistant.call_tool(
        "update_goal", {"goal_id": subtasks[0]["id"], "progress": 50}
    )
    assert progressed["rolled_up"][0]["goal_id"] == goal_id
    remembered = await assistant.call_tool(
        "add_session_memory",
        {"memory_type": "fact", "content": "Player prefers rustic architectural style"},
    )
    assert remembered["success"]
    saved = await assistant.call_tool(
        "update_project", {"context_update": "Requirements gathered. Player wants 3 rooms..."}
    )
    assert saved["project_key"] == "player_tavern_build"
    parent = next(g for g in assistant.views.goals().all() if g.id == goal_id)
    assert parent.progress == round(50 / len(subtasks), 2)


class _EchoArgs(ToolArgs):
    text: str


class _Echo(Tool[_EchoArgs]):
    name = "echo_for_test"
    description = "Say the text back."
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: _EchoArgs) -> dict[str, Any]:
        return {"success": True, "text": args.text}


def test_a_tool_takes_its_arguments_model_from_its_base() -> None:
    # Tool[_EchoArgs] names the model once; the schema the model sees is built from it.
    assert _Echo.args_model is _EchoArgs
    parameters = _Echo().schema()["function"]["parameters"]
    assert parameters["required"] == ["text"]
