"""Our conversation in the Messages API's shapes, and its answers in ours (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mindspace.llm.port import Message, ToolCall, Usage
from mindspace.llm.providers.anthropic_wire import (
    CONTINUES,
    MISSING_RESULT,
    MalformedAnswerError,
    from_wire,
    to_wire,
    to_wire_tools,
)

CALL = ToolCall("call_1", "add_goal", '{"description": "Fix the gate"}')


def _texts(turn: dict[str, Any]) -> list[str]:
    return [b["text"] for b in turn["content"] if b["type"] == "text"]


def test_system_messages_go_to_the_top_level_system_in_order() -> None:
    wire = to_wire(
        [
            Message("system", "You are the barkeep."),
            Message("user", "Hello."),
            Message("system", "## Goals\n- Fix the gate"),
            Message("user", "Any news?"),
        ]
    )
    assert wire.system == "You are the barkeep.\n\n## Goals\n- Fix the gate"
    # No message has the system role; the two user messages are one turn now.
    assert [t["role"] for t in wire.messages] == ["user"]
    assert _texts(wire.messages[0]) == ["Hello.", "Any news?"]


def test_a_tool_round_trip_is_tool_use_then_tool_result_in_a_user_turn() -> None:
    wire = to_wire(
        [
            Message("user", "Fix the gate, please."),
            Message("assistant", "On it.", (CALL,)),
            Message("tool", '{"success": true, "result": "added"}', tool_call_id="call_1"),
            Message("user", "Thanks!"),
        ]
    )
    assert [t["role"] for t in wire.messages] == ["user", "assistant", "user"]
    said = wire.messages[1]["content"]
    assert said == [
        {"type": "text", "text": "On it."},
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "add_goal",
            "input": {"description": "Fix the gate"},
        },
    ]
    answer = wire.messages[2]["content"]
    # The result comes first in its turn, then the user's next words.
    assert answer[0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": '{"success": true, "result": "added"}',
    }
    assert answer[1] == {"type": "text", "text": "Thanks!"}


def test_a_failed_tool_result_is_marked_as_an_error() -> None:
    wire = to_wire(
        [
            Message("user", "Go."),
            Message("assistant", None, (CALL,)),
            Message("tool", '{"success": false, "error": "too long"}', tool_call_id="call_1"),
        ]
    )
    assert wire.messages[-1]["content"][0]["is_error"] is True


def test_consecutive_turns_of_one_role_are_merged_and_empty_text_is_left_out() -> None:
    wire = to_wire(
        [
            Message("user", "One."),
            Message("user", "   "),
            Message("user", "Two."),
            Message("assistant", ""),
            Message("assistant", "Three."),
            Message("assistant", "Four."),
        ]
    )
    assert [t["role"] for t in wire.messages] == ["user", "assistant"]
    assert _texts(wire.messages[0]) == ["One.", "Two."]
    assert _texts(wire.messages[1]) == ["Three.", "Four."]


def test_a_call_whose_result_was_trimmed_gets_a_result_saying_so() -> None:
    wire = to_wire([Message("user", "Go."), Message("assistant", "", (CALL,))])
    assert wire.messages[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": MISSING_RESULT}],
    }


def test_a_result_whose_call_was_trimmed_becomes_text_and_the_user_speaks_first() -> None:
    wire = to_wire(
        [
            Message("system", "Be brief."),
            Message("assistant", "Earlier words."),
            Message("tool", "a stale result", tool_call_id="gone"),
        ]
    )
    roles = [t["role"] for t in wire.messages]
    assert roles == ["user", "assistant", "user"]
    assert _texts(wire.messages[0]) == [CONTINUES]
    assert wire.messages[2]["content"] == [
        {"type": "text", "text": "[a tool result: a stale result]"}
    ]


def test_without_tools_offered_calls_and_results_are_written_as_text() -> None:
    wire = to_wire(
        [
            Message("user", "Go."),
            Message("assistant", "Working.", (CALL,)),
            Message("tool", "added", tool_call_id="call_1"),
            Message("user", "Go on."),
        ],
        native_tools=False,
    )
    blocks = [b for t in wire.messages for b in t["content"]]
    assert {b["type"] for b in blocks} == {"text"}
    assert _texts(wire.messages[1]) == [
        "Working.",
        '[called the tool add_goal with {"description": "Fix the gate"}]',
    ]
    assert _texts(wire.messages[2]) == ["[result of add_goal: added]", "Go on."]


def test_ids_and_arguments_the_api_would_refuse_are_made_acceptable() -> None:
    odd = ToolCall("text:1.0", "add_goal", "not json {")
    wire = to_wire(
        [
            Message("user", "Go."),
            Message("assistant", None, (odd,)),
            Message("tool", "bad arguments", tool_call_id="text:1.0"),
        ]
    )
    use = wire.messages[1]["content"][0]
    assert use["id"] == "text_1_0"
    assert use["input"] == {"arguments": "not json {"}
    assert wire.messages[2]["content"][0]["tool_use_id"] == "text_1_0"


def test_only_system_text_becomes_the_one_user_message() -> None:
    wire = to_wire([Message("system", "Summarise this.")])
    assert wire.system is None
    assert wire.messages == [
        {"role": "user", "content": [{"type": "text", "text": "Summarise this."}]}
    ]


def test_tools_are_sent_with_an_input_schema() -> None:
    schema = {"type": "object", "properties": {"description": {"type": "string"}}}
    tools = to_wire_tools(
        [
            {
                "type": "function",
                "function": {"name": "add_goal", "description": "Add.", "parameters": schema},
            },
            {"type": "function", "function": {"name": "status"}},
        ]
    )
    assert tools == [
        {"name": "add_goal", "description": "Add.", "input_schema": schema},
        {"name": "status", "input_schema": {"type": "object", "properties": {}}},
    ]


def test_an_answer_with_text_and_tool_use_and_cached_usage() -> None:
    response = from_wire(
        {
            "type": "message",
            "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Adding it."},
                {"type": "tool_use", "id": "toolu_1", "name": "add_goal", "input": {"a": 1}},
            ],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 100,
                "output_tokens": 7,
            },
        },
        "fallback",
    )
    assert response.text == "Adding it."
    assert response.tool_calls == (ToolCall("toolu_1", "add_goal", '{"a": 1}'),)
    assert json.loads(response.tool_calls[0].arguments) == {"a": 1}
    assert response.usage == Usage(prompt_tokens=115, completion_tokens=7, cached_tokens=100)
    assert response.model == "claude-test"
    assert response.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "other"),
        (None, None),
    ],
)
def test_stop_reasons_map_to_finish_reasons(stop: str | None, finish: str | None) -> None:
    response = from_wire({"content": [{"type": "text", "text": "x"}], "stop_reason": stop}, "m")
    assert response.finish_reason == finish
    assert response.usage is None
    assert response.model == "m"


def test_a_text_only_answer_has_no_tool_calls() -> None:
    response = from_wire({"content": [{"type": "text", "text": "Just words."}]}, "m")
    assert (response.text, response.tool_calls) == ("Just words.", ())


@pytest.mark.parametrize(
    ("data", "what"),
    [
        ([], "not a JSON object"),
        ({"type": "message"}, "without a content list"),
        ({"content": ["x"]}, "not an object"),
        ({"content": [{"type": "text"}]}, "without text"),
        ({"content": [{"type": "tool_use", "input": {}}]}, "without a name"),
    ],
)
def test_malformed_answers_are_refused(data: object, what: str) -> None:
    with pytest.raises(MalformedAnswerError, match=what):
        from_wire(data, "m")
