"""Prompt components, pluggable slots, assembly order, budgets and history trimming."""

from __future__ import annotations

import pytest

from mindspace.context.assembly import (
    TRUNCATION_MARK,
    RenderedComponent,
    assemble,
    message_tokens,
    trim_history,
)
from mindspace.context.components import STATIC_COMPONENTS, ComponentRegistry, PromptComponent
from mindspace.context.contexts import get_context_config
from mindspace.errors import ComponentError
from mindspace.llm.port import Message, ToolCall
from mindspace.tokens import estimate_tokens


def test_the_nine_static_components_sit_at_their_ids() -> None:
    assert [(c.id, c.key) for c in STATIC_COMPONENTS] == [
        (0, "system_prompt"),
        (1000, "character_context"),
        (1500, "entity_context"),
        (2000, "semantic_memories"),
        (3000, "context_buffer"),
        (4000, "goals"),
        (5000, "conversation_history"),
        (6000, "pending_event"),
        (7000, "tool_result"),
    ]


def _plug(key: str) -> PromptComponent:
    return PromptComponent(id=-1, key=key, name=key.title(), description="custom", content="x")


def test_pluggable_components_take_the_free_slots_after_a_static_id() -> None:
    registry = ComponentRegistry()
    first = registry.register(_plug("weather"), after_static_id=1000)
    second = registry.register(_plug("mood"), after_static_id=1000)
    chosen = registry.register(_plug("quests"), after_static_id=4000, component_id=4500)
    assert (first.id, second.id, chosen.id) == (1001, 1002, 4500)
    ids = [c.id for c in registry.all()]
    assert ids == sorted(ids)
    assert ids.index(1001) == ids.index(1000) + 1


def test_collisions_and_bad_slots_are_clear_errors() -> None:
    registry = ComponentRegistry()
    registry.register(_plug("weather"), after_static_id=1000, component_id=1200)
    with pytest.raises(ComponentError, match="Slot 1200 is taken by 'weather'"):
        registry.register(_plug("mood"), after_static_id=1000, component_id=1200)
    # 1500 lies between 1001 and 1999 but is static: the message names the real ranges.
    with pytest.raises(
        ComponentError,
        match=r"Slot 1500 is the static component 'entity_context'; use 1001-1499 or 1501-1999",
    ):
        registry.register(_plug("mood"), after_static_id=1000, component_id=1500)
    with pytest.raises(ComponentError, match=r"Slot 2500 is not a pluggable slot after 1000"):
        registry.register(_plug("mood"), after_static_id=1000, component_id=2500)
    with pytest.raises(ComponentError, match="not a static component id"):
        registry.register(_plug("mood"), after_static_id=1234)
    with pytest.raises(ComponentError, match="key 'weather' already exists"):
        registry.register(_plug("weather"), after_static_id=2000)


def test_a_full_slot_range_is_a_clear_error() -> None:
    registry = ComponentRegistry()
    for n in range(999):
        registry.register(_plug(f"c{n}"), after_static_id=7000)
    with pytest.raises(ComponentError, match="All 999 pluggable slots after component 7000"):
        registry.register(_plug("one_too_many"), after_static_id=7000)


def test_overrides_resolve_as_the_spec_says() -> None:
    config = get_context_config("reflection")
    assert "self-reflection" in (config.get_component_content_override("system_prompt") or "")
    assert config.get_component_content_override("goals") is None


def _call(call_id: str) -> Message:
    return Message("assistant", None, (ToolCall(call_id, "add_goal", '{"description": "x"}'),))


def test_history_trimming_never_separates_a_tool_call_from_its_result() -> None:
    history = [
        Message("user", "first question " * 20),
        _call("a"),
        Message("tool", '{"success": true}' * 10, tool_call_id="a"),
        Message("assistant", "answer one"),
        Message("user", "second question"),
        _call("b"),
        Message("tool", '{"success": true}', tool_call_id="b"),
        Message("assistant", "answer two"),
    ]
    total = sum(message_tokens(m) for m in history)
    for budget in range(total + 2):
        kept = trim_history(history, budget)
        assert sum(message_tokens(m) for m in kept) <= budget
        assert kept == history[len(history) - len(kept) :]  # always the newest end
        calls = {c.id for m in kept for c in m.tool_calls}
        answered = {m.tool_call_id for m in kept if m.role == "tool"}
        assert calls == answered


def test_assembly_orders_by_id_merges_system_parts_and_respects_budgets() -> None:
    parts = [
        RenderedComponent(6000, "pending_event", "Pending Event", "user", "Hello!"),
        RenderedComponent(0, "system_prompt", "System Prompt", "system", "Be kind."),
        RenderedComponent(4000, "goals", "Goals", "system", "- goal " * 400, budget=50),
        RenderedComponent(3000, "context_buffer", "Context Buffer", "system", ""),
    ]
    prompt = assemble(parts)
    assert [m.role for m in prompt.messages] == ["system", "user"]
    system = prompt.messages[0].content or ""
    assert system.startswith("Be kind.\n\n## Goals\n")
    assert system.endswith(TRUNCATION_MARK)
    goals = next(r for r in prompt.components if r.key == "goals")
    assert goals.truncated
    assert goals.tokens <= 50
    assert [r.id for r in prompt.components] == [0, 3000, 4000, 6000]


def test_the_estimator_needs_no_network_and_grows_with_text() -> None:
    assert estimate_tokens("") == 0
    short = estimate_tokens("The tavern has five rooms.")
    assert 5 <= short <= 8
    assert estimate_tokens("word " * 1000) >= 1000
