"""Property: whatever JSON a caller throws at any tool, the answer is a result in the spec's
shape, and a failed call stores nothing (issue 12's property test)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mindspace import Assistant

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]

LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]

# Text of every kind: ordinary Unicode (astral too), lone surrogates mixed in, blanks,
# and a few sizes around and far beyond the limits.
texts = st.one_of(
    st.text(max_size=30),
    st.lists(st.one_of(st.text(max_size=8), st.sampled_from(LONE_SURROGATES)), max_size=5).map(
        "".join
    ),
    st.sampled_from(["", "   ", "tavern", "goal_1", "Alice", "🍺 ale", "a\x00b"]),
    st.sampled_from([129, 501, 1_001, 4_001, 10_001, 20_001, 100_001]).map(lambda n: "x" * n),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)


# Calls that succeed; the property test swaps one argument for anything at all, so the
# tools get past validation and fail (or not) deep inside, where partial writes could hide.
GOOD: dict[str, dict[str, Any]] = {
    "add_goal": {"description": "Fix the gate", "priority": "high"},
    "add_journal_entry": {"content": "Alice opened a shop", "tags": ["trade"], "importance": 6},
    "add_session_memory": {"memory_type": "fact", "content": "Alice likes dark ale"},
    "compact_session_memory": {
        "new_facts": ["Alice likes ale"],
        "new_patterns": [],
        "summary": "s",
    },
    "create_project": {"project_key": "tavern", "summary": "Run the tavern"},
    "go_to_sleep": {"reason": "the tavern is closed", "deep": False},
    "recall_memories": {"query": "ale", "limit": 3},
    "review_journal": {"synthesis": "Trade is growing", "days_back": 7},
    "search_episodic_memory": {"query": "shop", "limit": 3},
    "search_journal": {"query": "shop", "days_back": 3},
    "store_memory": {"content": "Bob fixes roofs", "source_entity": "Bob", "importance": 5},
    "swap_project": {"project_key": "tavern", "current_project_update": "halfway"},
    "update_entity_observation": {"entity_id": "Alice", "observation": "Alice waved"},
    "update_goal": {"goal_id": "goal_1", "progress": 50},
    "update_project": {"context_update": "Step two", "summary": "Still the tavern"},
    "update_system_prompt": {"new_prompt": "Be warm.", "reasoning": "players like it"},
}


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


deep_values = st.integers(min_value=60, max_value=3_000).map(_nested)


def _arguments_for(assistant: Assistant, name: str) -> st.SearchStrategy[Any]:
    fields = list(assistant.tools.get(name).args_model.model_fields)

    def shaped(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        if not fields:
            return st.just({})
        return st.dictionaries(st.sampled_from(fields), values, max_size=len(fields))

    flat = st.one_of(texts, json_values, st.lists(texts, max_size=25))
    mapping = shaped(st.one_of(flat, flat, deep_values))
    with_extra = st.tuples(mapping, st.dictionaries(texts, json_values, max_size=2)).map(
        lambda pair: {**pair[1], **pair[0]}
    )
    as_text = st.one_of(
        shaped(flat).map(json.dumps),
        texts,
        st.integers(min_value=1, max_value=5_000).map(lambda n: "[" * n + "]" * n),
        st.integers(min_value=60, max_value=5_000)
        .map(lambda n: json.dumps((fields or ["x"])[0]) + ": " + "[" * n + "]" * n)
        .map(lambda inner: "{" + inner + "}"),
    )
    good = GOOD.get(name, {})
    one_bad = (
        st.tuples(st.sampled_from(sorted(good)), st.one_of(texts, texts, flat, deep_values)).map(
            lambda swap: {**good, swap[0]: swap[1]}
        )
        if good
        else st.just(good)
    )
    return st.one_of(
        mapping, with_extra, json_values, as_text, st.none(), one_bad, one_bad, st.just(good)
    )


@pytest.fixture
def run(assistant: Assistant) -> Iterator[Callable[[Any], Any]]:
    """Run coroutines on one event loop for the whole test (hypothesis calls are sync)."""
    loop = asyncio.new_event_loop()
    yield loop.run_until_complete
    loop.close()


@settings(
    max_examples=250,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_json_to_any_tool_gives_a_spec_result_and_a_failure_stores_nothing(
    assistant: Assistant, stored: Snapshot, run: Callable[[Any], Any], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(assistant.tools.names()), label="tool")
    args = data.draw(_arguments_for(assistant, name), label="args")
    before = stored()

    result = run(assistant.call_tool(name, args))
    event(f"{name}: {'success' if result.get('success') else 'failure'}")

    assert isinstance(result, dict)
    assert isinstance(result.get("success"), bool), result
    # every result can travel: JSON, UTF-8, an HTTP body, the next request to the model
    json.dumps(result, ensure_ascii=False, default=str).encode("utf-8")
    if result["success"] is False:
        assert isinstance(result.get("error"), str), result
        assert result["error"]
        assert isinstance(result.get("suggestion"), str), result
        assert stored() == before, f"{name} failed but stored something: {result['error']}"
