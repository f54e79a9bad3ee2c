"""Strict structured output: the extraction rule, one repair, then a labelled fallback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, RootModel

from mindspace import ScriptedLLM
from mindspace.errors import LLMConnectionError, LLMResponseError
from mindspace.llm.parsing.structured import ask_structured, extract_json, parse_structured
from mindspace.llm.port import LLMResponse, Message


class Pair(BaseModel):
    name: str
    count: int


class Names(RootModel[list[str]]):
    pass


ASK = [Message("user", 'Give {"name": ..., "count": ...} as JSON.')]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ("7", 7),
        ('Here you go:\n```json\n{"a": 1}\n```\nEnjoy.', {"a": 1}),
        ('```\n["x"]\n```', ["x"]),
        ('Sure! The answer is {"a": [1, 2]} as asked.', {"a": [1, 2]}),
        ('Answer: ["x", "y"] - and 3 more words with 2 digits', ["x", "y"]),
    ],
)
def test_one_json_value_is_found_by_the_documented_rule(reply: str, expected: Any) -> None:
    assert extract_json(reply) == expected


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "empty"),
        ("the first 2 digits may not match", "no JSON value"),  # scalars never from prose
        ("I'd say 7 out of 10", "no JSON value"),
        ('{"a": 1} or maybe {"a": 2}', "2 JSON values"),
        ("```json\n[1]\n```\n```json\n[2]\n```", "2 code blocks"),
        ("```json\n[1, \n```", "not valid JSON"),
        ("```python\n[1]\n```", "marked 'python'"),
    ],
)
def test_ambiguous_or_missing_json_is_refused_with_a_reason(reply: str, reason: str) -> None:
    with pytest.raises(LLMResponseError, match=reason):
        extract_json(reply)


def test_validation_is_strict_and_names_the_field() -> None:
    assert parse_structured('{"name": "ale", "count": 2}', Pair) == Pair(name="ale", count=2)
    with pytest.raises(LLMResponseError, match=r"count: Input should be a valid integer"):
        parse_structured('{"name": "ale", "count": "2"}', Pair)  # no "2" for 2
    with pytest.raises(LLMResponseError, match=r"1: Input should be a valid string"):
        parse_structured('["a", 3]', Names)


async def test_a_good_first_answer_is_parsed_with_one_request(scripted: ScriptedLLM) -> None:
    scripted.enqueue('{"name": "ale", "count": 2}')
    answer = await ask_structured(scripted, ASK, Pair, expected="the object")
    assert (answer.value, answer.obtained, answer.errors) == (
        Pair(name="ale", count=2),
        "parsed",
        (),
    )
    assert len(scripted.history) == 1


async def test_one_bad_answer_gets_exactly_one_repair(scripted: ScriptedLLM) -> None:
    scripted.enqueue("The name is ale and the count is 2.")
    scripted.enqueue('{"name": "ale", "count": 2}')
    answer = await ask_structured(
        scripted, ASK, Pair, expected='one JSON object {"name": "...", "count": 0}', max_tokens=40
    )
    assert answer.value == Pair(name="ale", count=2)
    assert answer.obtained == "repaired"
    assert answer.replies == ("The name is ale and the count is 2.", '{"name": "ale", "count": 2}')
    repair = scripted.history[1]
    assert [m.role for m in repair.messages] == ["user", "assistant", "user"]
    assert repair.messages[1].content == "The name is ale and the count is 2."
    assert repair.last_user_text == (
        "Your previous answer could not be used: the answer holds no JSON value: "
        "'The name is ale and the count is 2.'\n"
        'Answer again with only one JSON object {"name": "...", "count": 0}. '
        "No other text, no explanation."
    )
    assert repair.max_tokens == 40  # the same limits on the repair request


async def test_two_bad_answers_give_the_labelled_fallback(scripted: ScriptedLLM) -> None:
    scripted.enqueue('{"name": "ale"}')
    scripted.enqueue('{"name": "ale", "count": "two"}')
    fallback = Pair(name="unknown", count=0)
    answer = await ask_structured(scripted, ASK, Pair, expected="the object", fallback=fallback)
    assert answer.value is fallback
    assert answer.obtained == "fallback"
    assert len(answer.errors) == 2
    assert "count: Field required" in answer.errors[0]
    assert answer.reason is not None
    assert "count: Input should be a valid integer" in answer.reason
    assert len(scripted.history) == 2  # never a second repair
    assert scripted.pending == 0


async def test_the_fallback_defaults_to_none(scripted: ScriptedLLM) -> None:
    scripted.enqueue("no")
    scripted.enqueue("still no")
    answer = await ask_structured(scripted, ASK, Pair, expected="the object")
    assert (answer.value, answer.obtained) == (None, "fallback")


async def test_a_cut_answer_is_named_as_cut_in_the_repair_request(scripted: ScriptedLLM) -> None:
    scripted.enqueue_response(LLMResponse(text='{"name": "a very lo', finish_reason="length"))
    scripted.enqueue('{"name": "ale", "count": 1}')
    answer = await ask_structured(scripted, ASK, Pair, expected="the object")
    assert answer.obtained == "repaired"
    assert "cut off at the length limit" in scripted.history[1].last_user_text


async def test_an_unreachable_model_is_an_error_not_a_fallback(scripted: ScriptedLLM) -> None:
    scripted.enqueue("not json")
    scripted.enqueue_error(LLMConnectionError("connection refused"))
    with pytest.raises(LLMConnectionError):
        await ask_structured(scripted, ASK, Pair, expected="the object", fallback=None)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(value=_JSON, fenced=st.booleans())
def test_any_json_answer_reads_back_as_itself(value: Any, fenced: bool) -> None:
    text = json.dumps(value)
    assert extract_json(f"```json\n{text}\n```" if fenced else text) == value


@given(prose=st.text(alphabet=st.characters(blacklist_characters="{}[]`\"'"), max_size=80))
def test_prose_without_a_whole_json_value_never_yields_one(prose: str) -> None:
    # Numbers inside prose ("rate it 7 out of 10") are never taken for an answer.
    try:
        json.loads(prose)
    except ValueError:
        with pytest.raises(LLMResponseError):
            extract_json(prose)
