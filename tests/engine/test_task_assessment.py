"""Layer-3 assessment: one short request whose answer can only narrow the tick's pattern."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.context.contexts import get_context_config

RANK = {"single_action": 0, "plan_execute": 1, "react_loop": 2}


@pytest.fixture
def assessing(settings: Settings) -> Settings:
    return settings.model_copy(update={"task_assessment_enabled": True})


def _goal_call(n: int) -> dict[str, Any]:
    return {"name": "add_goal", "arguments": {"description": f"Step {n}"}}


async def test_the_assessment_narrows_the_pattern_and_source_layers_say_so(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, assessing: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=assessing)
    scripted.enqueue(
        json.dumps(
            {
                "recommended_iterations": 2,
                "recommended_mode": "react_loop",
                "recommend_confirm_dangerous": True,
            }
        )
    )
    for n in range(5):
        scripted.enqueue(tool_calls=[_goal_call(n)])
    assistant.enqueue_event("Plan the feast", source_entity="Alice")

    result = await assistant.tick()

    asked = scripted.history[0]
    assert asked.tools == ()
    assert "assess the task" in (asked.messages[0].content or "")
    assert "at most 5 tool rounds in mode react_loop" in (asked.messages[0].content or "")
    assert asked.messages[-1].content == "Plan the feast"
    assert asked.max_tokens is not None
    assert asked.max_tokens <= 120
    assert result.pattern is not None
    assert result.pattern.max_iterations == 2
    assert result.pattern.source_layers["max_iterations"] == "assessment"
    assert result.pattern.dangerous_requires_confirm is True
    assert result.pattern.source_layers["dangerous_requires_confirm"] == "assessment"
    # The same mode as the context's: the assessment re-states it (ties go to the later layer).
    assert result.pattern.source_layers["mode"] == "assessment"
    assert len(scripted.history) == 1 + 2  # the assessment, then two loop iterations
    assert result.loop is not None
    assert result.loop.assessment == {
        "recommended_iterations": 2,
        "recommended_mode": "react_loop",
        "recommend_confirm_dangerous": True,
    }


async def test_a_single_action_recommendation_allows_one_round(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, assessing: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=assessing)
    scripted.enqueue('```json\n{"recommended_mode": "single_action"}\n```')
    scripted.enqueue(tool_calls=[_goal_call(1)])
    assistant.enqueue_event("Note a goal", source_entity="Alice")
    result = await assistant.tick()
    assert result.pattern is not None
    assert (result.pattern.mode, result.pattern.max_iterations) == ("single_action", 1)
    assert result.pattern.source_layers["mode"] == "assessment"
    assert len(scripted.history) == 2


async def test_a_looser_recommendation_changes_nothing(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, assessing: Settings
) -> None:
    assistant = make_assistant(llm=scripted, settings=assessing)
    scripted.enqueue(json.dumps({"recommended_iterations": 9, "recommended_mode": "react_loop"}))
    scripted.enqueue("Hello Alice!")
    assistant.enqueue_event("Hello", source_entity="Alice")
    result = await assistant.tick()
    assert result.reply == "Hello Alice!"
    assert result.pattern is not None
    assert result.pattern.max_iterations == 5
    assert result.pattern.source_layers["max_iterations"] == "context"


@pytest.mark.parametrize(
    "answer",
    [
        "I think three rounds will do.",
        '{"recommended_iterations": "3"}',
        '{"recommended_mode": "free_for_all"}',
        '{"recommended_iterations": 0}',
        "[2, 3]",
        '{"mood": "cheerful"}',
    ],
)
async def test_a_malformed_assessment_is_ignored_and_logged(
    make_assistant: Callable[..., Assistant],
    scripted: ScriptedLLM,
    assessing: Settings,
    caplog: pytest.LogCaptureFixture,
    answer: str,
) -> None:
    assistant = make_assistant(llm=scripted, settings=assessing)
    scripted.enqueue(answer)
    scripted.enqueue("Hello Alice!")
    assistant.enqueue_event("Hello", source_entity="Alice")
    with caplog.at_level(logging.WARNING, logger="mindspace.engine"):
        result = await assistant.tick()
    assert result.status == "done"
    assert result.reply == "Hello Alice!"
    assert result.pattern is not None
    assert "assessment" not in result.pattern.source_layers.values()
    assert result.loop is not None
    assert result.loop.assessment is None
    assert result.loop.assessment_problem
    assert "Task assessment ignored" in caplog.text


async def test_the_offline_model_answers_the_assessment_without_narrowing(
    make_assistant: Callable[..., Assistant],
    assessing: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assistant = make_assistant(settings=assessing)  # the offline model
    assistant.enqueue_event(
        "Can you build a tavern with a bar and a kitchen?", source_entity="Alice"
    )
    with caplog.at_level(logging.WARNING, logger="mindspace.engine"):
        result = await assistant.tick()
    assert "Task assessment ignored" not in caplog.text
    assert result.loop is not None
    assert result.loop.assessment == {"recommended_iterations": 5, "recommended_mode": "react_loop"}
    assert result.pattern is not None
    assert (result.pattern.mode, result.pattern.max_iterations) == ("react_loop", 5)
    assert result.tool_calls[:2] == [("add_goal", True), ("decompose_goal", True)]


async def test_no_assessment_request_when_switched_off(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue("Hello Alice!")
    assistant.enqueue_event("Hello", source_entity="Alice")
    result = await assistant.tick()
    assert len(scripted.history) == 1
    assert result.loop is not None
    assert result.loop.assessment is None


_keys = itertools.count()
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
_shaped = st.fixed_dictionaries(
    {},
    optional={
        "recommended_iterations": st.integers(-3, 20) | _json,
        "recommended_mode": st.sampled_from([*RANK, "loop", ""]) | _json,
        "recommend_confirm_dangerous": st.booleans() | _json,
        "context_signals": st.fixed_dictionaries(
            {},
            optional={
                "token_pressure": st.sampled_from(["normal", "high", "critical"]),
                "recent_errors": st.integers(0, 6),
            },
        ),
    },
)
_answers = st.one_of(
    _shaped.map(json.dumps),
    _json.map(json.dumps),
    st.text(max_size=80),
    _shaped.map(lambda d: f"Here you go:\n```json\n{json.dumps(d)}\n```"),
)


@hypothesis_settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(answer=_answers)
async def test_whatever_the_model_answers_the_pattern_is_never_looser(
    make_assistant: Callable[..., Assistant],
    assessing: Settings,
    answer: str,
) -> None:
    scripted = ScriptedLLM()
    assistant = make_assistant(f"npc{next(_keys)}", llm=scripted, settings=assessing)
    config = get_context_config("tick_event")
    # Layers 1-2 with the runtime's signals: what the tick may do without an assessment.
    base = assistant._ticker.sessions.compose(assistant._core.read(), config, None)
    scripted.enqueue(answer)
    scripted.enqueue("Noted.")
    assistant.enqueue_event("Hello", source_entity="Alice")

    result = await assistant.tick()

    pattern = result.pattern
    assert pattern is not None
    assert 1 <= pattern.max_iterations <= base.max_iterations
    assert RANK[pattern.mode] <= RANK[base.mode]
    assert pattern.dangerous_requires_confirm >= base.dangerous_requires_confirm
    assert pattern.multi_tool_enabled <= base.multi_tool_enabled
    assert pattern.sub_agents_enabled <= base.sub_agents_enabled
    assert pattern.allowed_categories == base.allowed_categories
    changed = {
        key
        for key in ("mode", "max_iterations", "dangerous_requires_confirm")
        if getattr(pattern, key) != getattr(base, key)
    }
    # Only the assessment (or single_action's one round, set by whoever set the mode)
    # can have changed anything; a malformed answer changes nothing.
    for key in changed:
        assert pattern.source_layers[key] == "assessment"
    if result.loop is not None and result.loop.assessment is None:
        assert changed == set()
