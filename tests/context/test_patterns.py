"""Three-layer execution patterns (spec 002 §3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindspace.context.contexts import DEFAULT_CONTEXT_CONFIGS, get_context_config
from mindspace.context.patterns import select_execution_pattern, token_pressure

RANK = {"single_action": 0, "plan_execute": 1, "react_loop": 2}


def test_the_spec_composition_example() -> None:
    static_config = {"multi_action_enabled": True, "max_iterations_per_tick": 5}
    context_config = get_context_config("reflection")  # max_iterations=3

    pattern = select_execution_pattern(static_config, context_config)

    assert pattern.mode == "react_loop"
    assert pattern.max_iterations == 3
    assert pattern.source_layers["mode"] == "context"
    assert pattern.source_layers["max_iterations"] == "context"
    assert pattern.source_layers["multi_tool_enabled"] == "allowed"


def test_the_context_table_of_the_spec() -> None:
    rows = {
        "tick_event": ("react_loop", 5, True, True),
        "reflection": ("react_loop", 3, True, False),
        "sleep_consolidate": ("react_loop", 10, True, False),
        "goal_decompose": ("single_action", 1, False, False),
    }
    for name, (mode, iterations, multi, sub_agents) in rows.items():
        config = DEFAULT_CONTEXT_CONFIGS[name]
        assert (
            config.execution_mode,
            config.max_iterations,
            config.allows_multi_tool,
            config.allows_sub_agents,
        ) == (mode, iterations, multi, sub_agents)
    assert len(DEFAULT_CONTEXT_CONFIGS) == 7


def test_the_static_layer_caps_a_context_that_asks_for_more() -> None:
    pattern = select_execution_pattern(
        {"max_iterations_per_tick": 5}, get_context_config("sleep_consolidate")
    )
    assert pattern.max_iterations == 5
    assert pattern.source_layers["max_iterations"] == "static"


def test_multi_action_disabled_statically_means_single_action() -> None:
    pattern = select_execution_pattern(
        {"multi_action_enabled": False}, get_context_config("tick_event")
    )
    assert pattern.mode == "single_action"
    assert pattern.max_iterations == 1
    assert pattern.multi_tool_enabled is False
    assert pattern.source_layers["multi_tool_enabled"] == "static"


@pytest.mark.parametrize(
    ("signals", "mode", "iterations", "confirm", "source"),
    [
        ({"token_pressure": "critical"}, "single_action", 1, False, "signal:token_pressure"),
        ({"token_pressure": "high"}, "react_loop", 2, False, "signal:token_pressure"),
        ({"recent_errors": 3}, "single_action", 1, True, "signal:recent_errors"),
        ({"recent_errors": 2}, "react_loop", 2, False, "signal:recent_errors"),
        ({"event_class": "communication"}, "single_action", 1, False, "signal:event_class"),
        ({"event_class": "building"}, "react_loop", 5, True, "signal:event_class"),
        ({"token_pressure": "normal", "recent_errors": 0}, "react_loop", 5, False, None),
    ],
)
def test_every_context_signal_of_the_spec(
    signals: dict[str, Any], mode: str, iterations: int, confirm: bool, source: str | None
) -> None:
    pattern = select_execution_pattern(
        {"max_iterations_per_tick": 5},
        get_context_config("tick_event"),
        {"context_signals": signals},
    )
    assert (pattern.mode, pattern.max_iterations, pattern.dangerous_requires_confirm) == (
        mode,
        iterations,
        confirm,
    )
    if source is not None:
        assert source in pattern.source_layers.values()


def test_the_assessment_may_only_restrict() -> None:
    config = get_context_config("reflection")
    pattern = select_execution_pattern(
        {"max_iterations_per_tick": 5},
        config,
        {"recommended_iterations": 9, "recommended_mode": "react_loop"},
    )
    assert pattern.max_iterations == 3
    narrowed = select_execution_pattern(
        {"max_iterations_per_tick": 5},
        config,
        {"recommended_iterations": 2, "recommend_confirm_dangerous": True},
    )
    assert narrowed.max_iterations == 2
    assert narrowed.source_layers["max_iterations"] == "assessment"
    assert narrowed.dangerous_requires_confirm is True


@pytest.mark.parametrize(
    ("percent", "pressure"), [(59.9, "normal"), (60, "high"), (79.9, "high"), (80, "critical")]
)
def test_token_pressure_thresholds(percent: float, pressure: str) -> None:
    assert token_pressure(percent) == pressure


statics = st.fixed_dictionaries(
    {
        "multi_action_enabled": st.booleans(),
        "max_iterations_per_tick": st.integers(min_value=1, max_value=10),
        "sub_agents_enabled": st.booleans(),
    }
)
assessments = st.fixed_dictionaries(
    {},
    optional={
        "recommended_iterations": st.integers(min_value=-3, max_value=20),
        "recommended_mode": st.sampled_from(list(RANK)),
        "recommend_confirm_dangerous": st.booleans(),
        "context_signals": st.fixed_dictionaries(
            {},
            optional={
                "token_pressure": st.sampled_from(["normal", "high", "critical"]),
                "recent_errors": st.integers(min_value=0, max_value=6),
                "event_class": st.sampled_from(["communication", "building", "other"]),
            },
        ),
    },
)


@given(static=statics, name=st.sampled_from(sorted(DEFAULT_CONTEXT_CONFIGS)), extra=assessments)
def test_a_later_layer_never_widens_an_earlier_one(
    static: dict[str, Any], name: str, extra: dict[str, Any]
) -> None:
    config = DEFAULT_CONTEXT_CONFIGS[name]
    two = select_execution_pattern(static, config)
    three = select_execution_pattern(static, config, extra)
    for pattern in (two, three):
        assert 1 <= pattern.max_iterations <= static["max_iterations_per_tick"]
        assert pattern.max_iterations <= config.max_iterations
        assert RANK[pattern.mode] <= RANK[config.execution_mode]
        assert pattern.multi_tool_enabled <= static["multi_action_enabled"]
        assert pattern.sub_agents_enabled <= (
            static["sub_agents_enabled"] and config.allows_sub_agents
        )
    assert three.max_iterations <= two.max_iterations
    assert RANK[three.mode] <= RANK[two.mode]
    assert three.dangerous_requires_confirm >= two.dangerous_requires_confirm
    assert three.multi_tool_enabled <= two.multi_tool_enabled
