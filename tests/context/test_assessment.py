"""Reading the model's layer-3 assessment: strict, and never looser than layers 1-2."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mindspace.context.assessment import combine_assessments, read_assessment
from mindspace.context.contexts import DEFAULT_CONTEXT_CONFIGS
from mindspace.context.patterns import select_execution_pattern

RANK = {"single_action": 0, "plan_execute": 1, "react_loop": 2}


def test_the_spec_shape_is_read() -> None:
    reading = read_assessment(
        'Sure: {"recommended_iterations": 3, "recommended_mode": "single_action", '
        '"recommend_confirm_dangerous": true, "context_signals": {"token_pressure": "normal"}}'
    )
    assert reading.problem is None
    # The model's own context_signals are never taken: the runtime measures those.
    assert reading.assessment == {
        "recommended_iterations": 3,
        "recommended_mode": "single_action",
        "recommend_confirm_dangerous": True,
    }


def test_one_bad_value_discards_the_whole_answer() -> None:
    reading = read_assessment('{"recommended_iterations": 2, "recommended_mode": "fast"}')
    assert reading.assessment is None
    assert reading.problem is not None
    assert "recommended_mode" in reading.problem


def test_combining_keeps_the_more_restrictive_value_of_each_key() -> None:
    host = {"recommended_iterations": 2, "context_signals": {"event_class": "building"}}
    model = {"recommended_iterations": 4, "recommended_mode": "plan_execute"}
    assert combine_assessments(host, model) == {
        "recommended_iterations": 2,
        "recommended_mode": "plan_execute",
        "context_signals": {"event_class": "building"},
    }
    assert combine_assessments(None, model) == model
    assert combine_assessments(None, None) is None


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
_shaped = st.fixed_dictionaries(
    {},
    optional={
        "recommended_iterations": st.integers(-3, 200) | _json,
        "recommended_mode": st.sampled_from([*RANK, "react", ""]) | _json,
        "recommend_confirm_dangerous": st.booleans() | _json,
        "context_signals": st.dictionaries(st.text(max_size=15), _json, max_size=3),
    },
)
_answers = st.one_of(_shaped.map(json.dumps), _json.map(json.dumps), st.text(max_size=120))
_statics = st.fixed_dictionaries(
    {
        "multi_action_enabled": st.booleans(),
        "max_iterations_per_tick": st.integers(1, 10),
        "sub_agents_enabled": st.booleans(),
    }
)
_signals = st.fixed_dictionaries(
    {},
    optional={
        "token_pressure": st.sampled_from(["normal", "high", "critical"]),
        "recent_errors": st.integers(0, 6),
        "event_class": st.sampled_from(["communication", "building", "other"]),
    },
)


@given(
    answer=_answers,
    static=_statics,
    name=st.sampled_from(sorted(DEFAULT_CONTEXT_CONFIGS)),
    signals=_signals,
)
def test_whatever_the_model_answers_it_only_restricts(
    answer: str, static: dict[str, Any], name: str, signals: dict[str, Any]
) -> None:
    config = DEFAULT_CONTEXT_CONFIGS[name]
    runtime = {"context_signals": signals}
    base = select_execution_pattern(static, config, runtime)
    reading = read_assessment(answer)
    assert (reading.assessment is None) != (reading.problem is None)
    final = select_execution_pattern(
        static, config, combine_assessments(runtime, reading.assessment)
    )
    assert 1 <= final.max_iterations <= base.max_iterations
    assert RANK[final.mode] <= RANK[base.mode]
    assert final.dangerous_requires_confirm >= base.dangerous_requires_confirm
    assert final.multi_tool_enabled <= base.multi_tool_enabled
    assert final.sub_agents_enabled <= base.sub_agents_enabled
    assert final.allowed_categories == base.allowed_categories
    assert final.terminal_ends_loop == base.terminal_ends_loop
    if reading.assessment is None:
        assert final == base
