"""The input boundary: invalid Unicode, over-long text and deep nesting are refused with the
spec's error, naming the field, before anything is stored (issue 12, items 1, 3, 4, 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from mindspace import Assistant, Settings
from mindspace.errors import InvalidInputError
from mindspace.limits import MAX_JSON_DEPTH
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer
from mindspace.tools.base import Tool, ToolArgs
from mindspace.validation import find_invalid_text, json_depth_exceeds

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]

LONE = "\ud800"


def _assert_refused(result: dict[str, Any], field: str, *phrases: str) -> None:
    assert result["success"] is False, result
    assert isinstance(result["error"], str)
    assert isinstance(result["suggestion"], str)
    assert field in result["error"], result["error"]
    for phrase in phrases:
        assert phrase in result["error"], result["error"]
    # the result itself must be sendable anywhere: JSON, UTF-8, an LLM request
    json.dumps(result, ensure_ascii=False).encode("utf-8")


async def _setup(assistant: Assistant) -> None:
    await assistant.call_tool("create_project", {"project_key": "tavern", "summary": "Run it"})


# Item 1 and item 3: a lone surrogate in any text argument is refused, nothing stored.
SURROGATE_CALLS: list[tuple[str, dict[str, Any], str]] = [
    (
        "update_system_prompt",
        {"new_prompt": f"be kind {LONE} always", "reasoning": "r"},
        "new_prompt",
    ),
    ("update_system_prompt", {"new_prompt": "be kind", "reasoning": f"why{LONE}"}, "reasoning"),
    ("add_goal", {"description": f"Fix the {LONE} gate"}, "description"),
    ("add_journal_entry", {"content": f"Alice {LONE} arrived"}, "content"),
    ("add_journal_entry", {"content": "Alice arrived", "tags": ["ok", f"t{LONE}"]}, "tags[1]"),
    (
        "add_journal_entry",
        {"content": "Alice arrived", "source_entity": f"A{LONE}"},
        "source_entity",
    ),
    ("review_journal", {"synthesis": f"Things {LONE} happened"}, "synthesis"),
    ("store_memory", {"content": f"Alice likes {LONE} ale"}, "content"),
    (
        "store_memory",
        {"content": "Alice likes ale", "source_entity": "\udfffBob"},
        "source_entity",
    ),
    (
        "update_entity_observation",
        {"entity_id": f"Al{LONE}ce", "observation": "Alice waved"},
        "entity_id",
    ),
    (
        "update_entity_observation",
        {"entity_id": "Alice", "observation": f"waved{LONE}"},
        "observation",
    ),
    ("update_project", {"context_update": f"Step {LONE} two"}, "context_update"),
    ("update_project", {"context_update": "Step two", "summary": f"S{LONE}"}, "summary"),
    ("add_session_memory", {"memory_type": "fact", "content": f"Alice {LONE}"}, "content"),
    (
        "compact_session_memory",
        {"new_facts": [f"F{LONE}"], "new_patterns": [], "summary": "s"},
        "new_facts[0]",
    ),
    ("go_to_sleep", {"reason": f"tired {LONE}"}, "reason"),
    ("recall_memories", {"query": f"ale {LONE}"}, "query"),
]


@pytest.mark.parametrize(
    ("tool", "args", "field"), SURROGATE_CALLS, ids=[f"{c[0]}-{c[2]}" for c in SURROGATE_CALLS]
)
async def test_a_lone_surrogate_is_refused_naming_the_field_and_nothing_is_stored(
    assistant: Assistant, stored: Snapshot, tool: str, args: dict[str, Any], field: str
) -> None:
    await _setup(assistant)
    before = stored()
    result = await assistant.call_tool(tool, args)
    _assert_refused(result, field, "invalid Unicode", "lone surrogate")
    assert stored() == before


async def test_the_refused_prompt_leaves_the_old_one_in_place(assistant: Assistant) -> None:
    await assistant.call_tool(
        "update_system_prompt", {"new_prompt": "Be warm.", "reasoning": "players like it"}
    )
    result = await assistant.call_tool(
        "update_system_prompt", {"new_prompt": f"be kind {LONE} always", "reasoning": "r"}
    )
    assert result["success"] is False
    status = await assistant.call_tool(
        "update_system_prompt", {"new_prompt": "Be brief.", "reasoning": "time"}
    )
    assert status["previous_prompt"] == "Be warm."


async def test_a_model_sending_a_lone_surrogate_gets_an_error_and_the_tick_completes(
    make_assistant: Callable[..., Assistant], stored: Snapshot
) -> None:
    # Before the boundary the argument was stored and the next request to the model
    # could not be encoded: tick() raised UnicodeEncodeError from then on.
    with ChatCompletionsServer() as server:
        llm = OpenAICompatibleLLM(base_url=server.url, model="scripted", api_key="test")
        npc = make_assistant("npc", llm=llm)
        server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": f"x{LONE}"}}])
        server.reply("Sorry, I could not note that.")
        npc.enqueue_event("Please remember to fix the gate", source_entity="Alice")
        first = await npc.tick()
        server.reply("Hello again!")
        npc.enqueue_event("Hi", source_entity="Alice")
        second = await npc.tick()
    assert first.status == "done", first.error
    assert first.loop is not None
    [call] = first.loop.calls
    assert call.name == "add_goal"
    assert call.ok is False
    assert "invalid Unicode" in call.result["error"]
    assert second.status == "done", second.error
    assert second.reply == "Hello again!"
    assert npc.views.goals().all() == []


# Item 5: every text field has a limit; these had none.
LONG_CALLS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "store_memory",
        {"content": "Alice likes ale", "source_entity": "a" * 10_000_000},
        "source_entity",
        "the limit is 128",
    ),
    (
        "update_entity_observation",
        {"entity_id": "e" * 10_000_000, "observation": "Alice waved"},
        "entity_id",
        "the limit is 128",
    ),
    ("go_to_sleep", {"reason": "r" * 1_000_000}, "reason", "the limit is 1,000"),
    (
        "add_journal_entry",
        {"content": "Alice arrived", "source_entity": "b" * 129},
        "source_entity",
        "the limit is 128",
    ),
    (
        "add_goal",
        {"description": "Fix it", "parent_id": "g" * 129},
        "parent_id",
        "the limit is 128",
    ),
    ("update_goal", {"goal_id": "g" * 1_000_000}, "goal_id", "the limit is 128"),
    ("recall_memories", {"query": "q" * 1_001}, "query", "the limit is 1,000"),
    ("search_journal", {"query": "q" * 1_001}, "query", "the limit is 1,000"),
    (
        "store_memory",
        {"content": "Alice likes ale", "tags": ["t" * 65]},
        "tags[0]",
        "the limit is 64",
    ),
    ("store_memory", {"content": "Alice likes ale", "tags": ["t"] * 21}, "tags", "the limit is 20"),
    (
        "update_entity_observation",
        {"entity_id": "Alice", "observation": "o", "entity_type": "t" * 33},
        "entity_type",
        "the limit is 32",  # its column's size (tests/storage/test_column_limits.py)
    ),
    (
        "swap_project",
        {"project_key": "tavern", "reasoning": "r" * 1_001},
        "reasoning",
        "the limit is 1,000",
    ),
    (
        "compact_session_memory",
        {"new_facts": ["f"] * 201, "new_patterns": [], "summary": "s"},
        "new_facts",
        "the limit is 200",
    ),
    ("search_journal", {"days_back": 10**30}, "days_back", "less than or equal to 36500"),
]


@pytest.mark.parametrize(
    ("tool", "args", "field", "limit"), LONG_CALLS, ids=[f"{c[0]}-{c[2]}" for c in LONG_CALLS]
)
async def test_text_over_its_limit_is_refused_naming_field_and_limit(
    assistant: Assistant, stored: Snapshot, tool: str, args: dict[str, Any], field: str, limit: str
) -> None:
    await _setup(assistant)
    before = stored()
    result = await assistant.call_tool(tool, args)
    _assert_refused(result, field, limit)
    assert len(result["error"]) < 2_000  # the offending value is quoted, but cut short
    assert stored() == before


async def test_text_at_its_limit_is_accepted(assistant: Assistant) -> None:
    result = await assistant.call_tool(
        "store_memory", {"content": "Alice likes ale", "source_entity": "a" * 128}
    )
    assert result["success"] is True
    assert result["metadata"]["source_entity"] == "a" * 128


async def test_a_setting_based_limit_follows_the_settings(
    make_assistant: Callable[..., Assistant], settings: Settings
) -> None:
    strict = make_assistant(
        "strict", settings=settings.model_copy(update={"max_goal_description_chars": 20})
    )
    refused = await strict.call_tool("add_goal", {"description": "x" * 21})
    _assert_refused(refused, "description", "the limit is 20")
    accepted = await strict.call_tool("add_goal", {"description": "x" * 20})
    assert accepted["success"] is True


# Item 4: nesting never reaches a recursive parser.
async def test_arguments_nested_3000_deep_as_json_text_are_refused(
    assistant: Assistant, stored: Snapshot
) -> None:
    before = stored()
    text = '{"description": ' + "[" * 3_000 + "]" * 3_000 + "}"
    result = await assistant.call_tool("add_goal", text)
    _assert_refused(result, "add_goal", f"deeper than {MAX_JSON_DEPTH} levels")
    assert stored() == before


async def test_arguments_nested_deep_as_python_objects_are_refused(
    assistant: Assistant, stored: Snapshot
) -> None:
    nested: list[Any] = []
    for _ in range(5_000):
        nested = [nested]
    before = stored()
    result = await assistant.call_tool("add_journal_entry", {"content": "c", "tags": nested})
    _assert_refused(result, "tags", "valid string")
    assert stored() == before


def test_every_text_argument_of_every_tool_declares_its_limit(assistant: Assistant) -> None:
    missing: list[str] = []
    tools: list[Tool[Any]] = assistant.tools.tools()
    assert {"go_to_sleep", "add_goal", "store_memory"} <= {t.name for t in tools}
    for tool in tools:
        properties = tool.schema()["function"]["parameters"]["properties"]
        for name, spec in properties.items():
            for variant in spec.get("anyOf", [spec]):
                kind, bounded = variant.get("type"), "maxLength" in variant or "enum" in variant
                if kind == "string" and not bounded:
                    missing.append(f"{tool.name}.{name}")
                if variant.get("type") == "array":
                    items = variant.get("items", {})
                    if "maxItems" not in variant or "maxLength" not in items:
                        missing.append(f"{tool.name}.{name}[]")
    assert missing == []


# Host events go through the same rule.
@pytest.mark.parametrize(
    ("kwargs", "phrase"),
    [
        ({"content": f"Hi {LONE} there"}, "'content' contains invalid Unicode"),
        ({"content": "Hi", "source_entity": f"Al{LONE}"}, "'source_entity' contains invalid"),
        ({"content": "Hi", "location": "\udc80bar"}, "'location' contains invalid"),
        ({"content": "Hi", "metadata": {"topic": f"ale{LONE}"}}, "'metadata.topic' contains"),
        ({"content": "Hi", "metadata": {"present": ["Bob", f"{LONE}"]}}, "'metadata.present[1]'"),
        ({"content": "Hi", "metadata": {"topic": "t" * 100_001}}, "the limit is 100,000"),
    ],
)
def test_host_events_with_invalid_text_are_refused_and_not_queued(
    assistant: Assistant, stored: Snapshot, kwargs: dict[str, Any], phrase: str
) -> None:
    before = stored()
    with pytest.raises(InvalidInputError) as caught:
        assistant.enqueue_event(**kwargs)
    assert phrase in caught.value.error
    assert caught.value.suggestion
    assert stored() == before
    assert assistant.views.open_events() == []


def test_host_event_metadata_nested_too_deep_is_refused(
    assistant: Assistant, stored: Snapshot
) -> None:
    nested: dict[str, Any] = {}
    for _ in range(3_000):
        nested = {"x": nested}
    before = stored()
    with pytest.raises(InvalidInputError, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        assistant.enqueue_event("Hi", metadata=nested)
    assert stored() == before


@pytest.mark.parametrize(
    ("document", "deep"),
    [
        ("[" * 64 + "]" * 64, False),
        ("[" * 65 + "]" * 65, True),
        ('{"a": "' + "[" * 100 + '"}', False),  # brackets inside a string do not count
        ('{"a": "\\"' + "{" * 100 + '"}', False),  # nor after an escaped quote
        ('["\\\\", ' + "[" * 64 + "]" * 64 + "]", True),  # an escaped backslash ends nothing
        (b"[" * 100_000, True),
    ],
)
def test_json_depth_is_found_by_scanning(document: str | bytes, deep: bool) -> None:
    assert json_depth_exceeds(document) is deep


def test_find_invalid_text_names_the_path_without_recursing() -> None:
    nested: list[Any] = ["fine"]
    for _ in range(10_000):
        nested = [nested]
    assert find_invalid_text({"a": nested}) is None
    found = find_invalid_text({"a": ["ok", {"b": f"x{LONE}"}]})
    assert found is not None
    assert found[0] == "a[1].b"


class _Room:
    """A host's world that records what the assistant said."""

    def __init__(self) -> None:
        self.said: list[str] = []

    async def say(self, text: str, *, target: str | None = None) -> None:
        self.said.append(text)

    async def look(self) -> str:
        return "A quiet tavern."


async def test_world_tools_refuse_bad_text_before_the_host_sees_it(assistant: Assistant) -> None:
    room = _Room()
    assistant.attach_world(room)
    refused = await assistant.call_tool("say", {"text": f"Hello {LONE}"})
    _assert_refused(refused, "text", "lone surrogate")
    too_long = await assistant.call_tool("say", {"text": "Hi", "target": "t" * 129})
    _assert_refused(too_long, "target", "the limit is 128")
    said = await assistant.call_tool("say", {"text": "Welcome!"})
    assert said["success"] is True
    assert room.said == ["Welcome!"]


def test_a_host_tool_without_declared_limits_still_gets_the_ceiling() -> None:
    class WhisperArgs(ToolArgs):
        text: str

    with pytest.raises(ValidationError, match="the limit is 100,000"):
        WhisperArgs.model_validate({"text": "x" * 100_001})
    with pytest.raises(ValidationError, match="lone surrogate"):
        WhisperArgs.model_validate({"text": f"psst {LONE}"})
    assert WhisperArgs.model_validate({"text": "x" * 100_000}).text == "x" * 100_000
